"""Settings, read once at the entry point into frozen dataclasses and passed down.

Nothing else in the project reads the environment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from plugin.bugs import InputError

__all__ = ["CONSENSUS_METHODS", "FLAG_ON", "SPAN_FLAG_ON", "Connection", "MappingOptions", "ProjectOptions",
           "ReportOptions", "ReviewOptions", "ScoringOptions", "SettingsError", "connection_from"]

AbsentSpan = Literal["label", "missing"]
Alignment = Literal["exact", "overlap"]
SpanFlagOn = Literal["f1-overlap", "f1", "items", "gamma"]
SPAN_FLAG_ON: tuple[str, ...] = ("f1-overlap", "f1", "items", "gamma")
ConsensusMethod = Literal["dawid-skene", "majority", "off"]
CONSENSUS_METHODS: tuple[str, ...] = ("dawid-skene", "majority", "off")
FlagOn = Literal["agreement", "posterior", "both"]
FLAG_ON: tuple[str, ...] = ("agreement", "posterior", "both")


class SettingsError(InputError):
    """A setting is missing or invalid; the message is one line for the user."""


@dataclass(frozen=True)
class Connection:
    """How to reach Label Studio.

    Attributes
    ----------
    url : str
        Base URL, e.g. ``http://localhost:8080``.
    api_key : str
        A legacy token or a personal access token (JWT); both work.
    timeout : float
        Seconds per request.
    retries : int
        Further attempts after a timeout or 5xx answer.
    backoff : float
        Seconds before the first retry; doubled each time.
    page_size : int
        Tasks per page when reading a project.
    writers : int
        Meta updates sent at once (Label Studio has no bulk endpoint for meta).
    """

    url: str
    api_key: str = field(repr=False)
    timeout: float = 30.0
    retries: int = 4
    backoff: float = 0.5
    page_size: int = 500
    writers: int = 4


@dataclass(frozen=True)
class MappingOptions:
    """How results become items.

    Attributes
    ----------
    absent_span : {"label", "missing"}
        An annotator who submitted a task but marked nothing at a span (or box)
        gives the label "no span" ("label"), or is missing there ("missing").
    span_alignment : {"exact", "overlap"}
        Spans are one item when their start and end are equal, or when their
        Jaccard overlap is at least ``span_jaccard``.
    span_jaccard : float
        Least Jaccard overlap for ``overlap`` alignment.
    box_iou : float
        Least IoU for two boxes (RectangleLabels, Rectangle, OcrLabels) to be one item.
    polygon_iou : float
        Least IoU for polygons, vectors and ellipses (and a box against one of them).
    mask_iou : float
        Least IoU for brush masks and bitmasks.
    mask_size : int
        Masks whose longer side exceeds this many pixels are compared reduced by an integer factor.
    keypoint_distance : float
        Most distance for two keypoints to match, as a share of the image's diagonal.
    video_iou : float
        Least mean box IoU over the frames of two video tracks.
    interval_jaccard : float
        Least overlap over union for two intervals (audio, time series, timelines).
    include_ground_truth : bool
        Count annotations imported with the tasks (marked ground truth by
        Label Studio), each as its own annotator ``gt:<id>``. Ground truth a
        reviewer marked is an annotator's annotation and always counts.
    """

    absent_span: AbsentSpan = "label"
    span_alignment: Alignment = "exact"
    span_jaccard: float = 0.5
    box_iou: float = 0.5
    polygon_iou: float = 0.5
    mask_iou: float = 0.5
    mask_size: int = 512
    keypoint_distance: float = 0.02
    video_iou: float = 0.5
    interval_jaccard: float = 0.5
    include_ground_truth: bool = False

    def __post_init__(self) -> None:
        for name in ("span_jaccard", "box_iou", "polygon_iou", "mask_iou", "video_iou", "interval_jaccard"):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise SettingsError(f"The {name.replace('_', ' ')} threshold must lie in (0, 1]; got {value}.")
        if not 0.0 < self.keypoint_distance <= 1.0:
            raise SettingsError(f"The keypoint distance must lie in (0, 1]; got {self.keypoint_distance}.")
        if not 8 <= self.mask_size <= 8192:
            raise SettingsError(f"The mask size must lie between 8 and 8192 pixels; got {self.mask_size}.")


@dataclass(frozen=True)
class ScoringOptions:
    """How scores are computed and when a task is flagged.

    Attributes
    ----------
    threshold : float
        A task with at least two annotations is flagged when a control's
        agreement on it is below this.
    thresholds : mapping of str to float
        Per control name, a threshold of its own instead.
    lowest_decile : bool
        Also flag a task whose score is below the project's 10th percentile
        of task scores (tasks with two annotations or more).
    flag_constant_low : bool
        Also flag a task whose multiple-choice item is "constant low" (Rosenberg & Binkowski 2004): its annotators
        disagree on most labels whichever they chose first. Off by default: the class is a project-level reading of
        the item and fires on tasks whose own agreement passes the threshold (:mod:`plugin.state.flags`).
    confidence : float
        Coverage of the project intervals.
    n_resamples : int
        Bootstrap resamples for the project intervals.
    seed : int
        Bootstrap seed, so that a repeated sync reports the same interval.
    span_flag_on : {"f1-overlap", "f1", "items", "gamma"}
        Which per-task value of a span-like control is compared with its
        threshold for the flag (and is the task's score for that control):
        its pairwise F1 with overlap matching at the span Jaccard
        (``"f1-overlap"``), with exact matching (``"f1"``), the agreement over
        its aligned items (``"items"``), or its gamma (``"gamma"``). The
        default forgives a boundary a character or two off (overlap matching
        keeps the match) and still flags a missed or differently labelled
        entity (F1 drops); see :mod:`plugin.state.flags`.
    gamma_alpha, gamma_beta : float
        Weights of gamma's positional and categorical dissimilarities
        (Mathet, Widlöcher & Métivier 2015, §3).
    gamma_empty : float
        Gamma's cost of a unit left unaligned, Δ∅.
    gamma_samples : int
        Sampled corpora behind gamma's expected disorder.
    gamma_seed : int
        Seed of that sampling, so that a repeated sync reports the same gamma.
    min_gt_accuracy : float, optional
        Annotators whose accuracy against the ground truth is below it, over
        at least ``min_gt_items`` ground-truth items, are named (sync summary,
        ``/status``, the report) and their tasks listed in a Data Manager tab.
    min_gt_items : int
    consensus : {"dawid-skene", "majority", "off"}
        How each categorical control's consensus label is found (:mod:`plugin.state.consensus`).
    consensus_prior : (float, float)
        Dawid-Skene's pseudo-counts on the diagonal of each annotator's confusion and shared among the cells off
        it: a Dirichlet prior on its rows (:func:`agreement.consensus.dawid_skene`); ``(0, 0)`` is maximum
        likelihood, and the diagonal's may not be below the others'. The default, (2, 1), makes a row with no
        answers right with probability 2/3 and an annotator seen on a handful of items neither certainly right
        nor certainly wrong, so that a refit on a few more items turns fewer labels of tasks nobody touched.
    flag_on : {"agreement", "posterior", "both"}
        Which rules flag a task: its agreement (the threshold, and constant low when ``flag_constant_low``), its
        consensus being uncertain (a control's consensus posterior below ``min_posterior``), or both.
    min_posterior : float
        The least consensus posterior ``flag_on`` posterior or both accepts.
    """

    threshold: float = 0.5
    thresholds: Mapping[str, float] = field(default_factory=dict)
    lowest_decile: bool = False
    flag_constant_low: bool = False
    confidence: float = 0.95
    n_resamples: int = 1000
    seed: int = 0
    span_flag_on: SpanFlagOn = "f1-overlap"
    gamma_alpha: float = 1.0
    gamma_beta: float = 1.0
    gamma_empty: float = 1.0
    gamma_samples: int = 30
    gamma_seed: int = 0
    min_gt_accuracy: float | None = None
    min_gt_items: int = 10
    consensus: ConsensusMethod = "dawid-skene"
    consensus_prior: tuple[float, float] = (2.0, 1.0)
    flag_on: FlagOn = "agreement"
    min_posterior: float = 0.9

    def __post_init__(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise SettingsError(f"The threshold (--threshold) must lie between 0 and 1; got {self.threshold}.")
        for name, value in self.thresholds.items():
            if not 0.0 <= value <= 1.0:  # NaN fails too
                raise SettingsError(f"The threshold of control {name!r} (--control-threshold) must lie between 0 "
                                    f"and 1; got {value}.")
        if self.span_flag_on not in SPAN_FLAG_ON:
            raise SettingsError(f"The span flag (--span-flag-on) must be one of {', '.join(SPAN_FLAG_ON)}; got "
                                f"{self.span_flag_on!r}.")
        if self.consensus not in CONSENSUS_METHODS:
            raise SettingsError(f"The consensus (--consensus) must be one of {', '.join(CONSENSUS_METHODS)}; got "
                                f"{self.consensus!r}.")
        prior = tuple(self.consensus_prior) if isinstance(self.consensus_prior, list | tuple) else ()
        if not (len(prior) == 2 and all(isinstance(value, int | float) and not isinstance(value, bool)
                                        and math.isfinite(value) and value >= 0 for value in prior)):
            raise SettingsError("The consensus prior (--consensus-prior) must be two finite pseudo-counts of at least "
                                f"0, on and off the diagonal; got {self.consensus_prior!r}.")
        if prior[0] < prior[1]:
            raise SettingsError("The consensus prior's pseudo-counts on the diagonal (--consensus-prior A,B) must be "
                                "at least those off it: a prior that expects annotators to be wrong turns the "
                                f"consensus upside down; got {prior[0]:g},{prior[1]:g}.")
        object.__setattr__(self, "consensus_prior", (float(prior[0]), float(prior[1])))
        if self.flag_on not in FLAG_ON:
            raise SettingsError(f"What flags a task (--flag-on) must be one of {', '.join(FLAG_ON)}; got "
                                f"{self.flag_on!r}.")
        if not 0.0 <= self.min_posterior <= 1.0:
            raise SettingsError(f"The least consensus posterior (--min-posterior) must lie between 0 and 1; got "
                                f"{self.min_posterior}.")
        for name in ("gamma_alpha", "gamma_beta", "gamma_empty"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise SettingsError(f"Gamma's {name.removeprefix('gamma_')} weight (--{name.replace('_', '-')}) must "
                                    f"be a finite number of at least 0; got {value}.")
        if self.gamma_alpha == 0 and self.gamma_beta == 0:
            raise SettingsError("Gamma needs a positional or a categorical weight above 0 (--gamma-alpha, "
                                "--gamma-beta); both are 0.")
        if self.min_gt_accuracy is not None and not 0.0 <= self.min_gt_accuracy <= 1.0:
            raise SettingsError("The least accuracy against the ground truth (--min-gt-accuracy) must lie between 0 "
                                f"and 1; got {self.min_gt_accuracy}.")
        if self.min_gt_items < 1:
            raise SettingsError("The least number of ground-truth items (--min-gt-items) must be at least 1; got "
                                f"{self.min_gt_items}.")
        if not self.gamma_empty > 0:
            raise SettingsError(f"Gamma's cost of an unaligned unit (--gamma-empty) must be above 0; got "
                                f"{self.gamma_empty}.")
        if not 2 <= self.gamma_samples <= 10000:
            raise SettingsError(f"Gamma's sampled corpora (--gamma-samples) must number between 2 and 10000; got "
                                f"{self.gamma_samples}.")


@dataclass(frozen=True)
class ReviewOptions:
    """What reviewers get inside Label Studio.

    Attributes
    ----------
    tab : bool
        Keep a "Low agreement" tab in the project's Data Manager whose filter
        finds the flagged tasks (created once, updated after).
    tab_title : str
    ground_truth_tab_title : str
        With ``--min-gt-accuracy``: the tab listing the tasks of the
        annotators whose agreement with the ground truth is below it.
    mirror_to_data : bool
        Also write each task's score into ``data["agreement_score"]``, so the
        Data Manager shows it as a column and the tab sorts worst first. It
        changes the task's data as exported: opt-in.
    escalate : bool
        Ask Label Studio for one more annotator on a flagged task whose
        annotations are in, by raising its ``overlap`` by one (the
        open-source counterpart of Enterprise's low-agreement strategy).
    max_overlap : int
        The most annotators escalation asks for on one task.
    consensus_predictions : bool
        Keep a prediction of model version ``consensus`` on each task, holding its consensus labels, so that
        reviewers see them in the labeling view and accept them in one click (:mod:`plugin.state.predictions`).
    """

    tab: bool = True
    tab_title: str = "Low agreement"
    ground_truth_tab_title: str = "Below ground truth"
    mirror_to_data: bool = False
    escalate: bool = False
    max_overlap: int = 5
    consensus_predictions: bool = False

    def __post_init__(self) -> None:
        if not 2 <= self.max_overlap <= 100:
            raise SettingsError(f"The most annotators a task may ask for must lie between 2 and 100; got "
                                f"{self.max_overlap}.")


@dataclass(frozen=True)
class ReportOptions:
    """What the admin report computes and how much of it the page lists.

    Attributes
    ----------
    target_width : float
        The width of SPA's interval the report counts the annotations still
        needed against.
    timeline_points : int
        Moments at which agreement over time is computed.
    timeline_resamples : int
        Bootstrap resamples at each moment (fewer than the headline's: the
        band shows the trend's noise, the headline holds the precise interval).
    max_categories : int
        Per-label rows and confusion matrices are drawn for controls with at
        most this many labels (free text has thousands).
    max_listed_tasks : int
        Flagged tasks listed in the page; the CSV and JSON hold them all.
    """

    target_width: float = 0.1
    timeline_points: int = 20
    timeline_resamples: int = 200
    max_categories: int = 40
    max_listed_tasks: int = 1000

    def __post_init__(self) -> None:
        if not 0 < self.target_width <= 2:
            raise SettingsError(f"The target interval width must lie in (0, 2]; got {self.target_width}.")
        if self.timeline_points < 1 or self.timeline_resamples < 10:
            raise SettingsError("The timeline needs at least 1 point and 10 resamples.")


def connection_from(environ: Mapping[str, str], *, url: str | None = None, api_key: str | None = None,
                    page_size: int | None = None, writers: int | None = None,
                    timeout: float | None = None) -> Connection:
    """A :class:`Connection` from ``LABEL_STUDIO_URL`` and ``LABEL_STUDIO_API_KEY``.

    Flags take precedence.

    Raises
    ------
    SettingsError
        If the URL or the key is missing.
    """
    url = url or environ.get("LABEL_STUDIO_URL")
    api_key = api_key or environ.get("LABEL_STUDIO_API_KEY")
    if not url:
        raise SettingsError("No Label Studio URL: set LABEL_STUDIO_URL or pass --url.")
    if not api_key:
        raise SettingsError("No Label Studio API key: set LABEL_STUDIO_API_KEY or pass --api-key.")
    if not url.startswith(("http://", "https://")):
        raise SettingsError(f"The Label Studio URL must start with http:// or https://; got {url!r}.")
    if page_size is not None and page_size < 1:
        raise SettingsError(f"The page size must be a positive number; got {page_size}.")
    if writers is not None and not 1 <= writers <= 32:
        raise SettingsError(f"The number of writers must lie between 1 and 32; got {writers}.")
    if timeout is not None and not 0 < timeout <= 600:
        raise SettingsError(f"The request timeout must lie between 0 and 600 seconds; got {timeout}.")
    return Connection(url=url.rstrip("/"), api_key=api_key.strip(), page_size=page_size or 500, writers=writers or 4,
                      timeout=timeout or 30.0)


@dataclass(frozen=True)
class ProjectOptions:
    """The options one project is scored and reviewed with."""

    mapping: MappingOptions = field(default_factory=MappingOptions)
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    review: ReviewOptions = field(default_factory=ReviewOptions)
