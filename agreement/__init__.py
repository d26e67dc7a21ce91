"""Inter-annotator agreement measures on count matrices: pure numpy and pandas.

Sparse Probability of Agreement, Krippendorff's alpha, the kappa family
(Cohen, Scott / Siegel & Castellan, Fleiss, PABAK), the augmented kappa for
multiply labeled items, Klemens' information-in-agreement P_I, annotator
matrices and bootstrap intervals. Nothing here knows about Label Studio.
"""

from agreement.alpha import (
    alpha_item_disagreement,
    coincidence_matrix,
    distance_matrix,
    expected_disagreement,
    krippendorff_alpha,
)
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
from agreement.counts import LabelCounts, aggregate_raters, contingency_table, label_counts
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
from agreement.reference import KappaEstimate, against_reference, kappa_estimate, wilson_interval
from agreement.running import RunningAgreement
from agreement.spa import item_agreement, item_agreement_variance, spa, spa_weights
from agreement.undefined import UndefinedMeasureWarning

__all__ = [
    "AnnotatorLabels",
    "AugmentedKappa",
    "ConfidenceInterval",
    "GwetEstimate",
    "InformationAgreement",
    "KappaEstimate",
    "KappaReport",
    "LabelCounts",
    "PairwiseMatrix",
    "RankedLabels",
    "RunningAgreement",
    "UndefinedMeasureWarning",
    "against_reference",
    "aggregate_raters",
    "agreement_weights",
    "alpha_item_disagreement",
    "annotator_labels",
    "augmented_item_kappa",
    "augmented_kappa",
    "augmented_sweep",
    "bias_index",
    "bootstrap_ci",
    "category_ratios",
    "classify_items",
    "cohen_kappa",
    "coincidence_matrix",
    "contingency_table",
    "distance_matrix",
    "expected_disagreement",
    "fleiss_gwet",
    "fleiss_kappa",
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
    "pabak",
    "pairwise_matrix",
    "prevalence_index",
    "ranked_labels",
    "scott_pi",
    "spa",
    "spa_weights",
    "wilson_interval",
]

__version__ = "0.1.0"
