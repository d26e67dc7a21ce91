"""The flag rule: which tasks go to review, and why, for every task at once or for one.

A task with at least two counted annotations is flagged when any control's
agreement on it is below that control's threshold (``options.thresholds``,
else ``options.threshold``): not the mean over controls, which would hide a
control the annotators disagree on. The agreement is SPA over the task's
items for nominal controls, and the weighted percent agreement (Gwet's
ordinal or quadratic weights) for Rating, Number and other ordered controls,
so a 4 against a 5 is near-agreement. A multiple-choice control also fires
when its item is "constant low" (Rosenberg & Binkowski 2004, section 6:
kappa' low and nearly the same at p = 1 and p = 0.5, so the annotators
disagree on the choices whichever comes first). With a decile cut
(``options.lowest_decile``), a task whose score (its lowest control value)
is below the project's 10th percentile fires too.

A span-like control is compared on the value ``options.span_flag_on``
chooses (its task scores' ``flag_on`` names it). The default,
``"f1-overlap"``, is the task's pairwise F1 with spans matched when their
labels are equal and their Jaccard overlap reaches ``--span-jaccard``: a
boundary a character or two off keeps the match (on a name of 10
characters, 2 off is a Jaccard of 0.8), so it alone does not put the task in
the review queue, while an entity one annotator missed, or labelled
differently, is a span without a match and lowers F1 as much as any other
miss. Exact F1 (``"f1"``) and the aligned items (``"items"``) count the same
off-by-one boundary as a complete disagreement; gamma (``"gamma"``) gives
partial credit for both position and label, but depends on the project's
expected disorder, sampled at each pass, and is None before the first.

With ``--flag-on posterior`` (or ``both``), a task also fires when a control's consensus on it is uncertain: its
least certain item's consensus posterior (:mod:`plugin.state.consensus`) is below ``--min-posterior``. That looks at
whom the task's labels come from: two weak annotators outvoting a strong one leave the consensus uncertain where
the raw agreement is the same as its opposite. With ``posterior`` alone, the agreement rules (threshold, constant
low) do not fire; the decile cut still does when asked for.

The rule is written once, over arrays (:func:`fired_rules`): the columns of
every task (:class:`plugin.state.task_scores.TaskScores`) and the words of one
task's reasons (:func:`flag_reasons`, a batch of one) both go through it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from plugin.settings import ScoringOptions

__all__ = ["CONSTANT_LOW", "SPAN_FLAG_KEYS", "FiredRules", "control_posterior", "control_value", "fired_rules",
           "flag_reasons", "lowest", "lowest_decile", "task_score_of"]

CONSTANT_LOW = "constant low"
"""The item class (Rosenberg & Binkowski 2004, class 2) that flags a multiple-choice task whatever its agreement."""

SPAN_FLAG_KEYS = {"f1-overlap": "f1_overlap", "f1": "f1", "gamma": "gamma"}
"""The key of a span control's task scores each ``--span-flag-on`` value compares (``"items"``: its ``spa``)."""
_FLAG_NAMES = {"f1_overlap": "overlap F1", "f1": "F1", "gamma": "gamma"}


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
    """(tasks, controls) bool: the control's item is constant low."""
    in_lowest_decile: np.ndarray
    """(tasks,) bool: the task's score is below the project's decile cut."""
    uncertain: np.ndarray
    """(tasks, controls) bool: the control's consensus posterior is below ``min_posterior``."""

    def flagged(self) -> np.ndarray:
        """(tasks,) bool: any rule fired."""
        return (self.below.any(axis=1) | self.constant_low.any(axis=1) | self.in_lowest_decile
                | self.uncertain.any(axis=1))


def fired_rules(values: np.ndarray, constant_low: np.ndarray, limits: Sequence[float],
                n_annotations: Sequence[int] | np.ndarray, *, decile_cut: float | None = None,
                posterior: np.ndarray | None = None, options: ScoringOptions | None = None) -> FiredRules:
    """The flag rule over every task at once.

    Parameters
    ----------
    values : ndarray of float, shape (tasks, controls)
        Each control's value (:func:`control_value`; NaN where undefined or absent: it never fires).
    constant_low : ndarray of bool, shape (tasks, controls)
        The control's item is :data:`CONSTANT_LOW`.
    limits : sequence of float
        Each control's threshold.
    n_annotations : array of int, shape (tasks,)
        A task with fewer than two counted annotations fires no rule.
    decile_cut : float, optional
        The project's lowest-decile cut.
    posterior : ndarray of float, shape (tasks, controls), optional
        Each control's least certain consensus posterior (NaN: none, it never fires).
    options : ScoringOptions, optional
        Its ``flag_on`` and ``min_posterior`` (by default, agreement alone).
    """
    flag_on = options.flag_on if options is not None else "agreement"
    counted = (np.asarray(n_annotations) >= 2)[:, None]
    on_agreement = counted & (flag_on != "posterior")
    below = (values < np.asarray(limits, dtype=float)[None, :]) & on_agreement  # NaN compares False, no warning
    decile = (lowest(values) < decile_cut) if decile_cut is not None else np.zeros(len(values), dtype=bool)
    uncertain = np.zeros(values.shape, dtype=bool)
    if posterior is not None and options is not None and flag_on != "agreement":
        uncertain = (posterior < options.min_posterior) & counted
    return FiredRules(below=below, constant_low=constant_low & on_agreement, in_lowest_decile=decile & counted[:, 0],
                      uncertain=uncertain)


def flag_reasons(n_annotations: int, by_control: Mapping[str, Mapping[str, Any]], options: ScoringOptions, *,
                 decile_cut: float | None = None) -> tuple[str, ...]:
    """Each rule that flags one task, in words (none: the task is not flagged): :func:`fired_rules` of one."""
    names = sorted(by_control)
    values = np.array([[_number(control_value(by_control[name])) for name in names]], dtype=float).reshape(1, -1)
    low = np.array([[by_control[name].get("item_class") == CONSTANT_LOW for name in names]], dtype=bool)
    limits = [options.thresholds.get(name, options.threshold) for name in names]
    posterior = np.array([[control_posterior(by_control[name]) for name in names]], dtype=float).reshape(1, -1)
    fired = fired_rules(values, low.reshape(1, -1), limits, [n_annotations], decile_cut=decile_cut,
                        posterior=posterior, options=options)
    reasons = []
    for at, name in enumerate(names):
        c = by_control[name]
        if fired.below[0, at]:
            kind = (_FLAG_NAMES[c["flag_on"]] if "flag_on" in c
                    else "weighted agreement" if "agreement" in c else "agreement")
            reasons.append(f"{name}: {kind} {values[0, at]:.2f} below {limits[at]:.2f}")
        if fired.constant_low[0, at]:  # Rosenberg & Binkowski (2004), class 2
            reasons.append(f"{name}: low agreement whatever weight the first choice gets (constant low)")
        if fired.uncertain[0, at]:
            reasons.append(f"{name}: consensus uncertain, posterior {posterior[0, at]:.2f} below "
                           f"{options.min_posterior:.2f}")
    if fired.in_lowest_decile[0]:
        reasons.append(f"score {lowest(values)[0]:.2f} in the project's lowest tenth (below {decile_cut:.2f})")
    return tuple(reasons)
