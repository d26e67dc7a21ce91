"""Inter-annotator agreement measures on count matrices and on spans: pure numpy, pandas and SciPy.

Sparse Probability of Agreement, Krippendorff's alpha, the kappa family
(Cohen, Scott / Siegel & Castellan, Fleiss, PABAK), the augmented kappa for
multiply labeled items, Klemens' information-in-agreement P_I, annotator
matrices and bootstrap intervals; for spans (:class:`Units`), span F1,
Krippendorff's unitizing alphas and Mathet's gamma. Nothing here knows about
Label Studio.

Each measure is exported by its own name. Where a measure shares its name with
its module (:func:`spa`, :func:`span_f1`, :func:`gamma`), ``agreement.<name>``
is the function; the module stays importable by its dotted path
(``from agreement.gamma import task_gamma``, ``importlib.import_module``).
"""

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
    "ExpectedDisorder",
    "GammaResult",
    "GwetEstimate",
    "InformationAgreement",
    "KappaEstimate",
    "KappaReport",
    "LabelCounts",
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
    "dissimilarity",
    "distance_matrix",
    "expected_disagreement",
    "expected_disorder",
    "fleiss_gwet",
    "fleiss_kappa",
    "gamma",
    "gamma_of",
    "gwet_ac",
    "information_agreement",
    "information_agreement_many",
    "item_agreement",
    "item_agreement_variance",
    "kappa_estimate",
    "kappa_report",
    "klemens_ordinal_weights",
    "krippendorff_alpha",
    "label_counts",
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
