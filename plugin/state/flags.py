"""The flag rule: which tasks go to review, why in words, and in what order; for every task at once or for one.

By default a task with at least two counted annotations is flagged when any control's agreement on it is below
that control's threshold (``options.thresholds``, else ``options.threshold``): not the mean over controls, which
would hide a control the annotators disagree on. The agreement is SPA over the task's items for nominal controls,
and the weighted percent agreement (Gwet's ordinal or quadratic weights) for Rating, Number and other ordered
controls, so a 4 against a 5 is near-agreement. That is the whole default rule; three more are asked for:

- ``--flag-on posterior`` (or ``both``): a control's consensus on the task is uncertain, its least certain item's
  consensus posterior (:mod:`plugin.state.consensus`) below ``--min-posterior``. That looks at whom the task's
  labels come from: two weak annotators outvoting a strong one leave the consensus uncertain where the raw
  agreement is the same as its opposite. With ``posterior`` alone the agreement rules do not fire.
- ``--flag-lowest-decile``: the task's score (its lowest control value) is below the project's 10th percentile.
- ``--flag-constant-low``: a multiple-choice item is "constant low" (Rosenberg & Binkowski 2004, section 6:
  kappa' low and nearly the same at p = 1 and p = 0.5, so the annotators disagree on the choices whichever comes
  first). Off by default: the class reads the item against the project's chance agreement, and fires on tasks
  whose own agreement passes the threshold (one label of four split), which a reviewer cannot act on.

A span-like control is compared on the value ``options.span_flag_on`` chooses (its task scores' ``flag_on`` names
it). The default, ``"f1-overlap"``, is the task's pairwise F1 with spans matched when their labels are equal and
their Jaccard overlap reaches ``--span-jaccard``: a boundary a character or two off keeps the match (on a name of
10 characters, 2 off is a Jaccard of 0.8), so it alone does not put the task in the review queue, while an entity
one annotator missed, or labelled differently, is a span without a match and lowers F1 as much as any other miss.
Exact F1 (``"f1"``) and the aligned items (``"items"``) count the same off-by-one boundary as a complete
disagreement; gamma (``"gamma"``) gives partial credit for both position and label, but depends on the project's
expected disorder, sampled at each pass, and is None before the first.

The rule is written once, over arrays (:func:`fired_rules`): the columns of every task
(:class:`plugin.state.task_scores.TaskScores`) and one task's reasons (:func:`flag_reasons`, a batch of one) both go
through it. The reasons' words are :func:`reason_words`'s alone: each names the control, what its annotators gave
(:class:`plugin.state.given.Given`) and the value against its limit. The queue's order is :func:`review_keys`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from plugin.mapping.choices import YES
from plugin.settings import ScoringOptions

if TYPE_CHECKING:
    from plugin.state.given import Given

__all__ = ["CONSTANT_LOW", "SPAN_FLAG_KEYS", "FiredRules", "control_posterior", "control_value", "fired_rules",
           "flag_reasons", "flag_rule", "lowest", "lowest_decile", "reason_words", "review_key", "review_keys",
           "same_review_key", "task_score_of"]

CONSTANT_LOW = "constant low"
"""The item class (Rosenberg & Binkowski 2004, class 2) that ``--flag-constant-low`` flags whatever the agreement."""

SPAN_FLAG_KEYS = {"f1-overlap": "f1_overlap", "f1": "f1", "gamma": "gamma"}
"""The key of a span control's task scores each ``--span-flag-on`` value compares (``"items"``: its ``spa``)."""
_FLAG_NAMES = {"f1_overlap": "overlap F1", "f1": "F1", "gamma": "gamma"}
MOST_NAMED = 4
"""The most items (labels, spans, regions) one reason names; the rest are counted."""


def control_value(scores: Mapping[str, Any]) -> Any:
    """The value of one control's task scores that its threshold is compared with.

    A span control's ``flag_on`` names it (``f1_overlap``, ``f1`` or
    ``gamma``); otherwise the weighted agreement of an ordered control, else SPA.

    >>> control_value({"spa": 0.5, "f1_overlap": 0.8, "flag_on": "f1_overlap"}), control_value({"spa": 0.5})
    (0.8, 0.5)
    """
    if "flag_on" in scores:
        return scores.get(scores["flag_on"])
    return scores.get("agreement", scores.get("spa"))


def control_posterior(scores: Mapping[str, Any]) -> float:
    """The least certain consensus posterior of one control's task scores (NaN: it has no consensus).

    >>> control_posterior({"consensus": {"posterior": [0.9, 0.6, None]}}), control_posterior({"spa": 1.0})
    (0.6, nan)
    """
    posterior = (scores.get("consensus") or {}).get("posterior")
    values = [_number(p) for p in (posterior if isinstance(posterior, list) else [posterior])]
    defined = [p for p in values if not math.isnan(p)]
    return min(defined) if defined else math.nan


def lowest(values: np.ndarray) -> np.ndarray:
    """Each row's least defined value (a task's score over its controls), NaN where none is.

    >>> lowest(np.array([[0.5, np.nan], [np.nan, np.nan]])).tolist()
    [0.5, nan]
    """
    if values.shape[1] == 0:
        return np.full(len(values), np.nan)
    return np.fmin.reduce(values, axis=1)  # fmin skips NaN, and gives NaN where every value is


def _number(value: Any) -> float:
    """A control value as a float (NaN where it is undefined or not a number)."""
    defined = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    return float(value) if defined else float("nan")


def task_score_of(by_control: Mapping[str, Mapping[str, Any]]) -> float | None:
    """A task's score: its lowest control value (:func:`control_value`), or None while undefined."""
    score = lowest(np.array([[_number(control_value(c)) for c in by_control.values()]], dtype=float))[0]
    return None if np.isnan(score) else float(score)


def lowest_decile(scores: np.ndarray, n_annotations: Sequence[int] | np.ndarray) -> float | None:
    """The 10th percentile of the scores of tasks with at least two annotations (None without any)."""
    scores = np.asarray(scores, dtype=float)
    scores = scores[(np.asarray(n_annotations) >= 2) & ~np.isnan(scores)]
    return float(np.quantile(scores, 0.1)) if len(scores) else None


class FiredRules(NamedTuple):
    """Which rule fires on which task: arrays aligned on the tasks (and the controls)."""

    below: np.ndarray
    """(tasks, controls) bool: the control's value is below its threshold."""
    constant_low: np.ndarray
    """(tasks, controls) bool: the control's item is constant low (only with ``flag_constant_low``)."""
    in_lowest_decile: np.ndarray
    """(tasks,) bool: the task's score is below the project's decile cut."""
    uncertain: np.ndarray
    """(tasks, controls) bool: the control's consensus posterior is below ``min_posterior``."""

    def flagged(self) -> np.ndarray:
        """(tasks,) bool: any rule fired."""
        return (self.below.any(axis=1) | self.constant_low.any(axis=1) | self.in_lowest_decile
                | self.uncertain.any(axis=1))

    def flagging(self, values: np.ndarray) -> np.ndarray:
        """(tasks,) int: the control that flagged each task, by its column in ``values`` (-1: not flagged).

        Of the controls a rule fired on, the one of the lowest value (``values``, as :func:`fired_rules` was
        given them); a task the decile cut alone flagged names its lowest control.

        >>> no = np.zeros((2, 2), dtype=bool)
        >>> FiredRules(np.array([[True, True], [False, False]]), no, np.array([False, True]), no).flagging(
        ...     np.array([[0.4, 0.2], [0.1, np.nan]])).tolist()
        [1, 0]
        """
        per_control = self.below | self.constant_low | self.uncertain
        ranked = np.where(np.isnan(values), np.finfo(float).max, values)  # an undefined value after any defined one
        ranked = np.where(per_control | ~per_control.any(axis=1, keepdims=True), ranked, np.inf)
        at = np.argmin(ranked, axis=1) if values.shape[1] else np.zeros(len(values), dtype=np.intp)
        return np.where(self.flagged(), at, -1)


def fired_rules(values: np.ndarray, constant_low: np.ndarray, limits: Sequence[float],
                n_annotations: Sequence[int] | np.ndarray, *, decile_cut: float | None = None,
                posterior: np.ndarray | None = None, options: ScoringOptions | None = None) -> FiredRules:
    """The flag rule over every task at once.

    Parameters
    ----------
    values : ndarray of float, shape (tasks, controls)
        Each control's value (:func:`control_value`; NaN where undefined or absent: it never fires).
    constant_low : ndarray of bool, shape (tasks, controls)
        The control's item is :data:`CONSTANT_LOW` (it fires only with ``options.flag_constant_low``).
    limits : sequence of float
        Each control's threshold.
    n_annotations : array of int, shape (tasks,)
        A task with fewer than two counted annotations fires no rule.
    decile_cut : float, optional
        The project's lowest-decile cut.
    posterior : ndarray of float, shape (tasks, controls), optional
        Each control's least certain consensus posterior (NaN: none, it never fires).
    options : ScoringOptions, optional
        Its ``flag_on``, ``min_posterior`` and ``flag_constant_low`` (by default, the threshold alone).
    """
    flag_on = options.flag_on if options is not None else "agreement"
    counted = (np.asarray(n_annotations) >= 2)[:, None]
    on_agreement = counted & (flag_on != "posterior")
    below = (values < np.asarray(limits, dtype=float)[None, :]) & on_agreement  # NaN compares False, no warning
    decile = (lowest(values) < decile_cut) if decile_cut is not None else np.zeros(len(values), dtype=bool)
    uncertain = np.zeros(values.shape, dtype=bool)
    if posterior is not None and options is not None and flag_on != "agreement":
        uncertain = (posterior < options.min_posterior) & counted
    low = constant_low & on_agreement & (options is not None and options.flag_constant_low)
    return FiredRules(below=below, constant_low=low, in_lowest_decile=decile & counted[:, 0], uncertain=uncertain)


def flag_rule(options: ScoringOptions) -> str:
    """The whole flag rule ``options`` set, in words: what the report's headline says a flagged task is.

    >>> flag_rule(ScoringOptions())
    "a task with two annotations or more is flagged when a control's agreement on it is below its threshold (0.50)"
    >>> flag_rule(ScoringOptions(flag_on="both", lowest_decile=True, thresholds={"quality": 0.7}))[64:]
    "agreement on it is below its threshold (0.50, quality 0.70) or its consensus posterior is below 0.90, or when \
its score is in the project's lowest tenth"
    """
    limits = ", ".join([f"{options.threshold:.2f}", *(f"{name} {value:.2f}"
                                                      for name, value in sorted(options.thresholds.items()))])
    agreement = f"a control's agreement on it is below its threshold ({limits})"
    posterior = f"consensus posterior is below {options.min_posterior:.2f}"
    when = {"agreement": agreement, "posterior": f"a control's {posterior}",
            "both": f"{agreement} or its {posterior}"}[options.flag_on]
    also = []
    if options.flag_constant_low and options.flag_on != "posterior":
        also.append("a multiple-choice control's annotators disagree on most labels whichever comes first")
    if options.lowest_decile:
        also.append("its score is in the project's lowest tenth")
    return f"a task with two annotations or more is flagged when {when}" + "".join(f", or when {a}" for a in also)


def review_keys(scores: np.ndarray, posteriors: np.ndarray, n_annotations: Sequence[int] | np.ndarray) -> np.ndarray:
    """Each task's place in the review queue as one number, lowest first (NaN: no score, last).

    The queue puts first the task where a review changes the most: the lowest score; among equal scores the least
    certain consensus (its lowest consensus posterior over its controls; a task without one counts as certain);
    then the fewest annotations. One number holds all three, so that one column of the Data Manager sorts the
    queue: the score rounded to 3 decimals (halves to even), plus the posterior in hundredths times 1e-6, plus the
    annotations (at most 99) times 1e-8. What is added stays below 0.0002: the number read to 3 decimals is the
    score, and below a threshold of 3 decimals where the score rounded to 3 decimals is.

    >>> review_keys(np.array([0.5, 0.5, 0.5, np.nan]), np.array([0.62, np.nan, 0.62, 0.5]), [3, 3, 2, 2]).tolist()
    [0.50006203, 0.50010003, 0.50006202, nan]
    """
    score = np.rint(np.multiply(scores, 1000.0)) / 1000.0
    certain = np.where(np.isnan(posteriors), 1.0, np.fmin(np.fmax(posteriors, 0.0), 1.0))
    annotations = np.fmin(np.fmax(n_annotations, 0), 99)
    return np.rint((score + np.rint(certain * 100.0) * 1e-6 + annotations * 1e-8) * 1e8) / 1e8


def same_review_key(read: float, wanted: float) -> bool:
    """Whether a review key as read (:func:`review_keys`) stands for ``wanted``: the same score and annotations.

    The consensus posterior that breaks ties between equal scores is compared no further: it moves with every refit
    of the annotators' reliabilities, often by a tenth or more on a project still being annotated, and rewriting a
    task's data for it cost most of a pass's writes (152 of 178 stale tasks on the demo). It is brought up to date
    whenever the task is written, as the posterior in its meta is (:mod:`plugin.state.blocks`).

    >>> same_review_key(0.50009203, 0.50006203), same_review_key(0.50106203, 0.50006203)
    (True, False)
    >>> same_review_key(0.50006204, 0.50006203)  # one annotation more
    False
    >>> same_review_key(-0.24999903, -0.24999403)  # a negative score (an alpha) keeps its steps
    True
    """
    return _key_parts(read) == _key_parts(wanted)


def _key_parts(key: float) -> tuple[int, int]:
    """A review key's score (in thousandths) and annotations, its posterior's hundredths left out."""
    steps = round(key * 1e8)  # score thousandths * 100,000 + posterior hundredths * 100 + annotations
    return steps // 100_000, steps % 100


def review_key(by_control: Mapping[str, Mapping[str, Any]], n_annotations: int) -> float | None:
    """One task's :func:`review_keys`, from its controls' scores as its meta holds them (None: it has no score).

    >>> review_key({"s": {"spa": 0.5, "consensus": {"posterior": 0.62}}, "q": {"spa": 0.0, "agreement": 0.9}}, 3)
    0.50006203
    """
    score = task_score_of(by_control)
    if score is None:
        return None
    posteriors = [p for c in by_control.values() if not math.isnan(p := control_posterior(c))]
    # review_keys' steps on Python floats (a pass computes one task's key at a time, where numpy's calls on one
    # number cost tens of µs): round() is np.rint (halves to even), and the sums are the same IEEE operations
    certain = min(max(min(posteriors), 0.0), 1.0) if posteriors else 1.0
    key = round(score * 1000.0) / 1000.0 + round(certain * 100.0) * 1e-6 + min(max(n_annotations, 0), 99) * 1e-8
    return round(key * 1e8) / 1e8


def flag_reasons(n_annotations: int, by_control: Mapping[str, Mapping[str, Any]], options: ScoringOptions, *,
                 decile_cut: float | None = None, given: Mapping[str, Given | None] | None = None) -> tuple[str, ...]:
    """Each rule that flags one task, in words (none: the task is not flagged): :func:`fired_rules` of one.

    ``given`` is what the annotators gave in each control (:class:`plugin.state.given.Given`), which the words
    name; without it they say the values alone.
    """
    names = sorted(by_control)
    values = np.array([[_number(control_value(by_control[name])) for name in names]], dtype=float).reshape(1, -1)
    low = np.array([[by_control[name].get("item_class") == CONSTANT_LOW for name in names]], dtype=bool)
    limits = [options.thresholds.get(name, options.threshold) for name in names]
    posterior = np.array([[control_posterior(by_control[name]) for name in names]], dtype=float).reshape(1, -1)
    fired = fired_rules(values, low.reshape(1, -1), limits, [n_annotations], decile_cut=decile_cut,
                        posterior=posterior, options=options)
    rules = {name: (bool(fired.below[0, at]), bool(fired.constant_low[0, at]), bool(fired.uncertain[0, at]))
             for at, name in enumerate(names)}
    return reason_words(by_control, rules, limits=dict(zip(names, limits, strict=True)),
                        min_posterior=options.min_posterior, given=given or {},
                        decile=(lowest(values)[0], decile_cut) if fired.in_lowest_decile[0] else None)


def reason_words(by_control: Mapping[str, Mapping[str, Any]], rules: Mapping[str, tuple[bool, bool, bool]], *,
                 limits: Mapping[str, float], min_posterior: float, given: Mapping[str, Given | None],
                 decile: tuple[float, float | None] | None = None) -> tuple[str, ...]:
    """The reasons of one flagged task in words: every reason a reviewer reads is written here.

    Each control a rule fired on (``rules``: below its threshold, constant low, consensus uncertain) gets a reason
    that names what its annotators gave (``given``) once, then why it fired, e.g.
    ``"sentiment: negative by 2, positive by 1 (agreement 0.33 below 0.50)"``; ``decile`` (the task's score and
    the cut) adds the lowest tenth's.

    >>> from plugin.state.given import Given
    >>> reason_words({"sentiment": {"spa": 1 / 3}}, {"sentiment": (True, False, False)}, limits={"sentiment": 0.5},
    ...              min_posterior=0.9, given={"sentiment": Given(items=(("", (("neg", 2), ("pos", 1))),))})
    ('sentiment: neg by 2, pos by 1 (agreement 0.33 below 0.50)',)
    >>> reason_words({"topics": {"spa": 0.75}}, {"topics": (False, True, False)}, limits={"topics": 0.5},
    ...              min_posterior=0.9, given={"topics": Given(items=(("price", (("yes", 2), ("no", 1))),
    ...                                                                 ("service", (("yes", 3),))), label_set=True)})
    ('topics: price by 2 of 3; annotators disagree on most labels whichever comes first',)
    """
    reasons = []
    for name, (below, constant_low, uncertain) in sorted(rules.items()):
        scores = by_control[name]
        said = _given_words(scores, given.get(name))
        if below:
            kind = (_FLAG_NAMES[scores["flag_on"]] if "flag_on" in scores
                    else "weighted agreement" if "agreement" in scores else "agreement")
            value = f"{kind} {_number(control_value(scores)):.2f} below {limits[name]:.2f}"
            reasons.append(f"{name}: {said} ({value})" if said else f"{name}: {value}")
            said = ""
        if constant_low:  # Rosenberg & Binkowski (2004), class 2
            reasons.append(f"{name}: {said + '; ' if said else ''}annotators disagree on most labels whichever comes "
                           "first")
            said = ""
        if uncertain:
            reasons.append(f"{name}: {said + '; ' if said else ''}consensus uncertain, posterior "
                           f"{control_posterior(scores):.2f} below {min_posterior:.2f}")
    if decile is not None:
        score, cut = decile
        reasons.append(f"score {score:.2f} in the project's lowest tenth (below {cut:.2f})")
    return tuple(reasons)


def _given_words(scores: Mapping[str, Any], given: Given | None) -> str:
    """What the annotators gave in one control, in words (``""``: nothing to say); for :func:`reason_words`."""
    if given is None:
        return ""
    if "flag_on" in scores and given.spans is not None:
        matched, compared, pairs = given.spans
        between = f" between {pairs} pairs of annotators" if pairs > 1 else ""
        return f"{matched} of {compared} span{'s' if compared != 1 else ''} matched{between}" if compared else ""
    joined = "; "
    if given.label_set:  # the labels some annotators chose and others did not
        split = [(item, dict(labels)) for item, labels in given.items if len(labels) > 1]
        parts = [f"{item} by {counts.get(YES, 0)} of {sum(counts.values())}" for item, counts in split]
        joined = ", "
    elif "agreement" in scores:  # ordered: the values given, in order
        parts = [(f"{item}: " if item else "") + ", ".join(_value_text(v) for v in sorted(
            value for value, count in labels for _ in range(count))) for item, labels in given.items]
    else:
        alone = len(given.items) == 1
        parts = [(f"{item}: " if item else "") + ", ".join(f"{label} by {count}" for label, count in labels)
                 for item, labels in given.items if alone or len(labels) > 1]
    more = len(parts) - MOST_NAMED
    return joined.join(parts[:MOST_NAMED]) + (f"{joined}{more} more" if more > 0 else "")


def _value_text(value: Any) -> str:
    """A value an annotator gave to an ordered control, as a reason says it (``4``, ``2.5``)."""
    return f"{value:g}" if isinstance(value, float) else str(value)
