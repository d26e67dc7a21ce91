"""Task meta: the agreement block each task carries, merged into whatever else is there.

Label Studio replaces a task's whole ``meta`` on update, so the block is
merged into the meta as read, every other key kept. A task is written only
when its block changed (``updated_at`` aside), so a second sync with nothing
new writes nothing.

A task's alpha is scored against the project's expected disagreement, which
moves a little with every annotation anywhere in the project; a span
control's gamma against the project's expected disorder, sampled again at a
pass after any change; and a consensus posterior with the annotators'
reliabilities, fitted again on the whole project. Rewriting tasks for such
drift would cost Label Studio writes at every pass while annotation goes on
(on the demo, about 0.35 more writes per annotation with a tolerance of
0.05, and a write per span task at every pass with 0.01, gamma's sampling
noise). So a task's meta is rewritten only where something a reviewer acts
on moves: its counts, SPA, F1 and agreement, its flag and reasons, its
consensus label (unless the refit is unsure of the new one too:
:data:`CONSENSUS_HOLD`), its score in the grid (the mirrored score, within
:data:`ALPHA_TOLERANCE` where a gamma gives it, its posterior tie-break
aside), or whether a value is defined at all. Alpha, gamma and posterior
values in a task's meta, a consensus label held so, and the posterior
tie-break of its mirrored score are those of its block's ``updated_at``: they
are brought up to date whenever the task is written, and ``/status``,
``sync --json`` and the report give them as of now.

:func:`needed_write` is the one diff: given a task as read and the block it
should carry, it says what to write (the merged meta, the score mirrored into
``data``, a raised ``overlap``). A pass counts stale tasks with it; the writer
writes what it says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugin.mapping.labelconfig import Control
from plugin.settings import ReviewOptions
from plugin.state.flags import review_key, same_review_key, task_score_of
from plugin.state.predictions import HeldPrediction, PredictionWrite, needed_prediction, read_prediction
from plugin.state.scoring import TaskScore

__all__ = ["ALPHA_TOLERANCE", "CONSENSUS_HOLD", "DATA_KEY", "META_KEY", "TaskAsRead", "Write", "agreement_block",
           "diff_key", "escalated_overlap", "merged_meta", "mirrored_score", "needed_write", "task_score"]

META_KEY = "agreement"
DATA_KEY = "agreement_score"
"""The key of ``data`` the task's score is mirrored into (a Data Manager column the review tab sorts on)."""
ALPHA_TOLERANCE = 0.05
"""How far a gamma may drift with the project before the mirrored score that holds it is rewritten (the review
queue's order in the grid)."""
CONSENSUS_HOLD = 2 / 3
"""A consensus whose posterior (its least certain item's) is below this is not rewritten for its label alone.

A refit of the annotators' reliabilities moves the label of a task whose annotators split nearly evenly from one
side to the other and back (two annotators, two labels: a posterior near 0.5 either way); on the demo such flips
were most of what a pass rewrote. The label is written with the task's next change, and at once when the refit is
sure of it."""
_VOLATILE = ("updated_at",)
_TOLERANT = ("alpha", "gamma", "posterior")
"""Keys whose values move with the whole project (its expected disagreement or disorder, its consensus fit).

Only whether they are defined is compared.
"""


def agreement_block(score: TaskScore, *, version: str, updated_at: str) -> dict[str, Any]:
    """The ``meta["agreement"]`` block of one task.

    ``spa`` and ``alpha`` are null while the task has fewer than two usable
    annotations.
    """
    return {
        "spa": score.spa,
        "alpha": score.alpha,
        "n_annotations": score.n_annotations,
        "flagged": score.flagged,
        "reasons": list(score.reasons),
        "controls": {name: dict(values) for name, values in sorted(score.controls.items())},
        "updated_at": updated_at,
        "version": version,
    }


def diff_key(meta: object) -> bytes:
    """A task's meta as the diff reads it: compact JSON with sorted keys.

    The agreement block's ``updated_at`` is left out (never compared): two metas with equal keys carry the same
    block.

    Raises TypeError or ValueError when the meta is not JSON.

    >>> diff_key({"agreement": {"spa": 0.5, "updated_at": "2026-01-01", "flagged": False}})
    b'{"agreement":{"flagged":false,"spa":0.5}}'
    """
    if isinstance(meta, Mapping) and isinstance(meta.get(META_KEY), Mapping):
        meta = {**meta, META_KEY: {k: v for k, v in meta[META_KEY].items() if k not in _VOLATILE}}
    return json.dumps(meta, separators=(",", ":"), sort_keys=True, allow_nan=False).encode()


def _same(old: object, new: object, key: str = "") -> bool:
    """Whether two blocks are equal for a reviewer, ``updated_at`` aside.

    ``alpha``, ``gamma`` and ``posterior`` values (and a list of them) count as equal while both are numbers: they
    drift with the whole project (see the module's notes).

    >>> _same({"consensus": {"label": "a", "posterior": [0.9, 0.6]}}, {"consensus": {"label": "a",
    ...       "posterior": [0.7, 0.6]}})
    True
    >>> _same({"consensus": {"label": "a", "posterior": 0.9}}, {"consensus": {"label": "b", "posterior": 0.9}})
    False
    >>> _same({"alpha": None, "spa": 1.0}, {"alpha": 0.5, "spa": 1.0})  # defined now: a change
    False
    >>> _same({"consensus": {"label": "a", "posterior": 0.55}}, {"consensus": {"label": "b", "posterior": 0.6}})
    True
    >>> _same({"consensus": {"label": "a", "posterior": 0.55}}, {"consensus": {"label": "b", "posterior": 0.9}})
    False
    """
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        keys = (set(old) | set(new)) - set(_VOLATILE)
        if key == "consensus" and _unsure(old, new):  # a near tie's label, moved by a refit: held
            keys.discard("label")
        return all(k in old and k in new and _same(old[k], new[k], k) for k in keys)
    if isinstance(old, list) and isinstance(new, list):  # a label set's posteriors are drifting values too
        return len(old) == len(new) and all(_same(a, b, key) for a, b in zip(old, new, strict=True))
    if key in _TOLERANT and _number(old) and _number(new):
        return True
    return bool(old == new)


def _unsure(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether a consensus moved to ``new`` from ``old`` only within a near tie: both labelled, posterior below the hold.

    >>> _unsure({"label": "a"}, {"label": "b", "posterior": 0.5}), _unsure({"label": None}, {"label": "b"})
    (True, False)
    """
    posterior = new.get("posterior")
    return (old.get("label") is not None and new.get("label") is not None and _number(posterior)
            and posterior < CONSENSUS_HOLD)  # type: ignore[operator]


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def merged_meta(existing: object, block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The task's new meta with ``block`` merged in, or None when nothing would change.

    A task that never had a block and has nothing to score (no annotations)
    is left alone.
    """
    meta = dict(existing) if isinstance(existing, Mapping) else {}
    current = meta.get(META_KEY)
    if isinstance(current, Mapping) and _same(current, block):
        return None
    if current is None and block.get("n_annotations", 0) == 0:
        return None
    meta[META_KEY] = dict(block)
    return meta


@dataclass(frozen=True)
class TaskAsRead:
    """What the diff reads of a task as Label Studio returned it.

    Attributes
    ----------
    meta : object
        The task's ``meta`` (a dict, or whatever Label Studio held).
    data_score : object
        ``data["agreement_score"]``, the mirrored score, or None.
    overlap : object
        The task's ``overlap``: how many annotators Label Studio asks for.
    prediction : HeldPrediction, optional
        The task's consensus prediction (:mod:`plugin.state.predictions`).
    """

    meta: object = None
    data_score: object = None
    overlap: object = None
    prediction: HeldPrediction | None = None

    @classmethod
    def of(cls, task: Mapping[str, Any]) -> TaskAsRead:
        """What the diff reads of ``task``, a task as Label Studio returns it.

        >>> TaskAsRead.of({"id": 1, "meta": {"k": 1}, "data": {"text": "x", "agreement_score": 0.5}, "overlap": 2})
        TaskAsRead(meta={'k': 1}, data_score=0.5, overlap=2, prediction=None)
        """
        data = task.get("data")
        return cls(task.get("meta"), data.get(DATA_KEY) if isinstance(data, Mapping) else None, task.get("overlap"),
                   read_prediction(task))

    def diffed(self) -> TaskAsRead:
        """What a state keeps to diff against: the meta's agreement block alone.

        The rest of the meta is never compared, and a write merges into a fresh read.

        >>> TaskAsRead(meta={"k": 1, "agreement": {"flagged": False}}, overlap=2).diffed()
        TaskAsRead(meta={'agreement': {'flagged': False}}, data_score=None, overlap=2, prediction=None)
        """
        meta = self.meta
        if isinstance(meta, Mapping):
            meta = {META_KEY: meta[META_KEY]} if META_KEY in meta else {}
        return TaskAsRead(meta, self.data_score, self.overlap, self.prediction)


@dataclass(frozen=True)
class Write:
    """What one task needs written: the fields of one update, each None when it stays as it is.

    Attributes
    ----------
    meta : dict or None
        The merged meta, or None when the block in it is right.
    mirror : bool
        Whether ``data["agreement_score"]`` must change to :attr:`score`.
    score : float or None
        The task's score for the grid, its place in the review queue (:func:`mirrored_score`; None removes it).
    overlap : int or None
        The overlap to ask for, or None when it stays.
    prediction : PredictionWrite or None
        What the task's consensus prediction needs (:mod:`plugin.state.predictions`), or None.
    """

    meta: dict[str, Any] | None
    mirror: bool
    score: float | None
    overlap: int | None
    prediction: PredictionWrite | None = None

    def data(self, existing: object) -> dict[str, Any] | None:
        """The task's new ``data``: ``existing`` (the data as read) with the score merged in, or None."""
        return _with_score(existing, self.score) if self.mirror else None


def needed_write(task: TaskAsRead, block: Mapping[str, Any], *, review: ReviewOptions,
                 alpha_tolerance: float = ALPHA_TOLERANCE, meta_current: bool = False,
                 controls: Mapping[str, Control] | None = None) -> Write | None:
    """What ``task`` (as read) needs written to carry ``block``, or None when it carries it already.

    The one diff of the project: a pass counts its stale tasks with it, and
    the writer writes what it returns. The meta is merged (:func:`merged_meta`);
    with ``review.mirror_to_data`` the task's score is mirrored into its data;
    with ``review.escalate`` a flagged task asks for one more annotator
    (:func:`escalated_overlap`); with ``review.consensus_predictions`` its consensus
    prediction follows the block's consensus (``controls``: the label config's,
    :func:`plugin.state.predictions.needed_prediction`). ``meta_current`` says the meta is known to
    carry the block already (its :func:`diff_key` equals the block's), so
    only the mirrored score and the overlap are compared.

    Examples
    --------
    >>> block = {"n_annotations": 2, "flagged": True, "controls": {"sentiment": {"spa": 0.0}}}
    >>> review = ReviewOptions(mirror_to_data=True, escalate=True)
    >>> write = needed_write(TaskAsRead(meta={"k": 1}, overlap=2), block, review=review)
    >>> write.meta, write.score, write.overlap
    ({'k': 1, 'agreement': {'n_annotations': 2, 'flagged': True, 'controls': {'sentiment': {'spa': 0.0}}}}, 0.0001\
0002, 3)
    >>> needed_write(TaskAsRead(meta={"agreement": block}, data_score=0.00010002, overlap=3), block,
    ...              review=review) is None
    True
    """
    meta = None if meta_current else merged_meta(task.meta, block)
    score = mirrored_score(block) if review.mirror_to_data else None
    mirror = review.mirror_to_data and not _same_score(task.data_score, score, block, alpha_tolerance)
    overlap = escalated_overlap(task.overlap, block, cap=review.max_overlap) if review.escalate else None
    prediction = (needed_prediction(task.prediction, block, controls)
                  if review.consensus_predictions and controls is not None else None)
    if meta is None and not mirror and overlap is None and prediction is None:
        return None
    return Write(meta=meta, mirror=mirror, score=score, overlap=overlap, prediction=prediction)


def escalated_overlap(overlap: object, block: Mapping[str, Any], *, cap: int) -> int | None:
    """The overlap a task should ask for so that one more annotator labels it.

    None when the overlap should not change.

    A flagged task whose annotations are all in (at least as many as its
    ``overlap``, as read) asks for one more than it has, up to ``cap``. The
    decision reads only the task as Label Studio holds it, so it is the same
    on every pass, and a task already waiting for its extra annotator is left
    alone.

    Examples
    --------
    >>> escalated_overlap(2, {"flagged": True, "n_annotations": 2}, cap=5)
    3
    >>> escalated_overlap(3, {"flagged": True, "n_annotations": 2}, cap=5) is None  # waiting
    True
    >>> escalated_overlap(5, {"flagged": True, "n_annotations": 5}, cap=5) is None  # at the cap
    True
    """
    annotations = block.get("n_annotations")
    if not block.get("flagged") or not isinstance(overlap, int) or not isinstance(annotations, int):
        return None
    wanted = min(cap, max(overlap, annotations) + 1)
    return wanted if annotations >= overlap and wanted > overlap else None


def _same_score(mirrored: object, score: float | None, block: Mapping[str, Any], tolerance: float) -> bool:
    """Whether the mirrored score stands for ``score``.

    It does when equal, when apart only by a consensus posterior's drift
    (:func:`plugin.state.flags.same_review_key`), or within ``tolerance`` when a gamma gives it.

    A span control flagged on gamma (``flag_on``) moves with every new sample
    of the project's expected disorder, as alpha moves with its expected
    disagreement; the meta counts that drift as no change, and so does the
    mirrored score.

    >>> block = {"controls": {"ner": {"gamma": 0.994, "flag_on": "gamma"}}}
    >>> _same_score(0.995, 0.994, block, 0.01), _same_score(0.995, 0.994, {"controls": {}}, 0.01)
    (True, False)
    """
    if mirrored == score:
        return True
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (mirrored, score))
    if numbers and same_review_key(float(mirrored), float(score)):  # type: ignore[arg-type]
        return True  # a consensus posterior's drift, which the meta counts as no change either
    drifts = any(isinstance(c, Mapping) and c.get("flag_on") == "gamma" for c in (block.get("controls") or {}).values())
    return drifts and numbers and abs(float(mirrored) - float(score)) <= tolerance  # type: ignore[arg-type]


def task_score(block: Mapping[str, Any]) -> float | None:
    """A task's score for the grid: its lowest control value, or None.

    A control's value is :func:`plugin.state.flags.control_value`: the flagged value of a span control, the
    weighted agreement of an ordered one, else SPA.

    >>> task_score({"controls": {"sentiment": {"spa": 1.0}, "quality": {"spa": 0.0, "agreement": 0.9}}})
    0.9
    """
    controls = {name: c for name, c in (block.get("controls") or {}).items() if isinstance(c, Mapping)}
    score = task_score_of(controls)
    return round(score, 3) if score is not None else None


def mirrored_score(block: Mapping[str, Any]) -> float | None:
    """What ``data["agreement_score"]`` holds: the task's place in the review queue, or None without a score.

    It is :func:`plugin.state.flags.review_key` of the block: the task's score (:func:`task_score`) to 3 decimals,
    its ties broken after them by the least certain consensus, then the fewest annotations, so that the Data
    Manager, which sorts a tab by one column, sorts the queue; read to 3 decimals it is the score.

    >>> mirrored_score({"n_annotations": 3, "controls": {"sentiment": {"spa": 0.5, "consensus": {"posterior": 0.62}},
    ...                                                  "quality": {"spa": 0.0, "agreement": 0.9}}})
    0.50006203
    """
    controls = {name: c for name, c in (block.get("controls") or {}).items() if isinstance(c, Mapping)}
    annotations = block.get("n_annotations")
    return review_key(controls, annotations if isinstance(annotations, int) and not isinstance(annotations, bool)
                      else 0)


def _with_score(existing: object, score: float | None) -> dict[str, Any]:
    data = dict(existing) if isinstance(existing, Mapping) else {}
    if score is None:
        data.pop(DATA_KEY, None)
    else:
        data[DATA_KEY] = score
    return data
