"""Inter-annotator agreement measures on count matrices and on spans: pure numpy, pandas and SciPy.

Sparse Probability of Agreement, Krippendorff's alpha, the kappa family
(Cohen, Scott / Siegel & Castellan, Fleiss, PABAK), the augmented kappa for
multiply labeled items, Klemens' information-in-agreement P_I, annotator
matrices and bootstrap intervals; consensus (majority vote, Dawid-Skene); for spans (:class:`Units`), span F1,
Krippendorff's unitizing alphas and Mathet's gamma. Nothing here knows about
Label Studio.

Each measure is exported by its own name. Where a measure shares its name with
its module (:func:`spa`, :func:`span_f1`, :func:`gamma`), ``agreement.<name>``
is the function; the module stays importable by its dotted path
(``from agreement.gamma import task_gamma``, ``importlib.import_module``).

A measure's module is imported when the measure is first read (PEP 562's
module ``__getattr__``), so ``import agreement`` and the measures on count
matrices load no SciPy; the span measures load its solvers when they need them.
"""

# The helpers are bound under private names: the package's public names are its exports only.
import sys as _sys
import typing as _typing
from importlib import import_module as _import_module
from types import ModuleType as _ModuleType

if _typing.TYPE_CHECKING:  # the names as type checkers see them; at run time each is imported when first read
    from agreement.alignment import Alignment, best_alignment, best_alignments
    from agreement.alpha import (
        alpha_item_disagreement,
        coincidence_matrix,
        distance_matrix,
        expected_disagreement,
        krippendorff_alpha,
    )
    from agreement.annotators import annotator_agreement
    from agreement.augmented import (
        AugmentedKappa,
        RankedLabels,
        augmented_item_kappa,
        augmented_kappa,
        augmented_sweep,
        classify_items,
        ranked_labels,
    )
    from agreement.bootstrap import ConfidenceInterval, bootstrap_ci
    from agreement.confusion import specific_agreement
    from agreement.consensus import (
        Consensus,
        MajorityVote,
        annotator_accuracy,
        dawid_skene,
        held_posterior,
        majority_vote,
    )
    from agreement.counts import LabelCounts, aggregate_raters, contingency_table, label_counts
    from agreement.family import agreement_family
    from agreement.gamma import (
        ExpectedDisorder,
        GammaResult,
        ObservedDisorder,
        dissimilarity,
        expected_disorder,
        gamma,
        gamma_of,
        observed_disorder,
        task_gamma,
        task_gammas,
    )
    from agreement.gwet import GwetEstimate, agreement_weights, fleiss_gwet, gwet_ac
    from agreement.information import (
        InformationAgreement,
        category_ratios,
        information_agreement,
        information_agreement_many,
        klemens_ordinal_weights,
    )
    from agreement.kappa import (
        KappaReport,
        bias_index,
        cohen_kappa,
        fleiss_kappa,
        kappa_report,
        pabak,
        prevalence_index,
        scott_pi,
    )
    from agreement.pairwise import AnnotatorLabels, PairwiseMatrix, annotator_labels, pairwise_matrix
    from agreement.reference import (
        KappaEstimate,
        against_reference,
        kappa_estimate,
        pairwise_kappa_mean,
        wilson_interval,
    )
    from agreement.running import RunningAgreement
    from agreement.running_augmented import RunningAugmented
    from agreement.spa import item_agreement, item_agreement_variance, spa, spa_weights
    from agreement.span_f1 import SpanF1, span_f1, task_f1
    from agreement.timeline import agreement_over_time
    from agreement.undefined import UndefinedMeasureWarning
    from agreement.unitizing import UAlpha, UnitizingAlpha, u_alpha, unitizing_alpha
    from agreement.units import Units, units_from_frame

__all__ = [
    "Alignment",
    "AnnotatorLabels",
    "AugmentedKappa",
    "ConfidenceInterval",
    "Consensus",
    "ExpectedDisorder",
    "GammaResult",
    "GwetEstimate",
    "InformationAgreement",
    "KappaEstimate",
    "KappaReport",
    "LabelCounts",
    "MajorityVote",
    "ObservedDisorder",
    "PairwiseMatrix",
    "RankedLabels",
    "RunningAgreement",
    "RunningAugmented",
    "SpanF1",
    "UAlpha",
    "UndefinedMeasureWarning",
    "UnitizingAlpha",
    "Units",
    "against_reference",
    "aggregate_raters",
    "agreement_family",
    "agreement_over_time",
    "agreement_weights",
    "alpha_item_disagreement",
    "annotator_accuracy",
    "annotator_agreement",
    "annotator_labels",
    "augmented_item_kappa",
    "augmented_kappa",
    "augmented_sweep",
    "best_alignment",
    "best_alignments",
    "bias_index",
    "bootstrap_ci",
    "category_ratios",
    "classify_items",
    "cohen_kappa",
    "coincidence_matrix",
    "contingency_table",
    "dawid_skene",
    "dissimilarity",
    "distance_matrix",
    "expected_disagreement",
    "expected_disorder",
    "fleiss_gwet",
    "fleiss_kappa",
    "gamma",
    "gamma_of",
    "gwet_ac",
    "held_posterior",
    "information_agreement",
    "information_agreement_many",
    "item_agreement",
    "item_agreement_variance",
    "kappa_estimate",
    "kappa_report",
    "klemens_ordinal_weights",
    "krippendorff_alpha",
    "label_counts",
    "majority_vote",
    "observed_disorder",
    "pabak",
    "pairwise_kappa_mean",
    "pairwise_matrix",
    "prevalence_index",
    "ranked_labels",
    "scott_pi",
    "spa",
    "spa_weights",
    "span_f1",
    "specific_agreement",
    "task_f1",
    "task_gamma",
    "task_gammas",
    "u_alpha",
    "unitizing_alpha",
    "units_from_frame",
    "wilson_interval",
]

__version__ = "0.1.0"

_EXPORTS: dict[str, tuple[str, ...]] = {
    "alignment": ("Alignment", "best_alignment", "best_alignments"),
    "alpha": ("alpha_item_disagreement", "coincidence_matrix", "distance_matrix", "expected_disagreement",
              "krippendorff_alpha"),
    "annotators": ("annotator_agreement",),
    "augmented": ("AugmentedKappa", "RankedLabels", "augmented_item_kappa", "augmented_kappa", "augmented_sweep",
                  "classify_items", "ranked_labels"),
    "bootstrap": ("ConfidenceInterval", "bootstrap_ci"),
    "confusion": ("specific_agreement",),
    "consensus": ("Consensus", "MajorityVote", "annotator_accuracy", "dawid_skene", "held_posterior",
                  "majority_vote"),
    "counts": ("LabelCounts", "aggregate_raters", "contingency_table", "label_counts"),
    "family": ("agreement_family",),
    "gamma": ("ExpectedDisorder", "GammaResult", "ObservedDisorder", "dissimilarity", "expected_disorder", "gamma",
              "gamma_of", "observed_disorder", "task_gamma", "task_gammas"),
    "gwet": ("GwetEstimate", "agreement_weights", "fleiss_gwet", "gwet_ac"),
    "information": ("InformationAgreement", "category_ratios", "information_agreement", "information_agreement_many",
                    "klemens_ordinal_weights"),
    "kappa": ("KappaReport", "bias_index", "cohen_kappa", "fleiss_kappa", "kappa_report", "pabak", "prevalence_index",
              "scott_pi"),
    "pairwise": ("AnnotatorLabels", "PairwiseMatrix", "annotator_labels", "pairwise_matrix"),
    "reference": ("KappaEstimate", "against_reference", "kappa_estimate", "pairwise_kappa_mean", "wilson_interval"),
    "running": ("RunningAgreement",),
    "running_augmented": ("RunningAugmented",),
    "spa": ("item_agreement", "item_agreement_variance", "spa", "spa_weights"),
    "span_f1": ("SpanF1", "span_f1", "task_f1"),
    "timeline": ("agreement_over_time",),
    "undefined": ("UndefinedMeasureWarning",),
    "unitizing": ("UAlpha", "UnitizingAlpha", "u_alpha", "unitizing_alpha"),
    "units": ("Units", "units_from_frame"),
}
"""The exported names by the submodule that defines them (each submodule is imported when one of its names is first
read, so that ``import agreement`` costs no SciPy)."""

_MODULE_OF: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> _typing.Any:
    """The exported ``name``, its submodule imported on first use and the value bound here (PEP 562)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(_ModuleType):
    """The package's module type: a measure named as its module stays the package's attribute of that name.

    The import system binds a submodule to its package's attribute once it is loaded (``import agreement.gamma``
    sets ``agreement.gamma``); for :func:`spa`, :func:`span_f1` and :func:`gamma` the function is bound instead.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, _ModuleType) and value.__name__ == f"{__name__}.{name}" and name in _MODULE_OF:
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
