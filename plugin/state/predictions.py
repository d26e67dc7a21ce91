"""The consensus as a Label Studio prediction: what reviewers see in the labeling view and accept in one click.

With ``--consensus-predictions``, each task with a consensus carries one prediction of ``model_version``
:data:`MODEL_VERSION`, whose results are the consensus labels of its task-level controls (Choices single and
multiple, Rating, Taxonomy) and whose ``score`` is the least certain of their posteriors. Per-region and span
controls are left out: a prediction of theirs would need a region's geometry, and the consensus is over aligned
items, not over one annotator's regions.

The prediction is diffed as the meta is (:func:`plugin.state.blocks.needed_write`): the task as read holds its
consensus prediction (:func:`read_prediction`), created when missing, updated when its results or score differ,
and extra copies deleted, so a task never carries two. It is never read back as a reference
(:mod:`plugin.state.references` counts it under its own reason).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugin.mapping.labelconfig import Control

__all__ = ["MODEL_VERSION", "PREDICTED_TAGS", "HeldPrediction", "PredictionWrite", "needed_prediction",
           "prediction_results", "read_prediction"]

MODEL_VERSION = "consensus"
PREDICTED_TAGS = ("choices", "rating", "taxonomy")
"""The tags whose consensus a prediction carries (task-level controls only)."""


def _key(results: Sequence[Mapping[str, Any]], score: object) -> bytes:
    """A prediction's results and score as the diff reads them: what a reviewer sees, in compact sorted JSON."""
    kept = sorted(({k: r.get(k) for k in ("from_name", "to_name", "type", "value")} for r in results
                   if isinstance(r, Mapping)), key=lambda r: str(r.get("from_name")))
    number = round(float(score), 2) if isinstance(score, int | float) and not isinstance(score, bool) else None
    return json.dumps([kept, number], separators=(",", ":"), sort_keys=True, default=str).encode()


@dataclass(frozen=True, slots=True)
class HeldPrediction:
    """A task's consensus prediction as read: its id, its diff key, and the ids of any extra copies."""

    id: int
    key: bytes
    extra: tuple[int, ...] = ()


def read_prediction(task: Mapping[str, Any]) -> HeldPrediction | None:
    """The task's consensus prediction as Label Studio holds it (the latest, if several), or None."""
    predictions = task.get("predictions")
    ours = [p for p in predictions if isinstance(p, Mapping) and p.get("model_version") == MODEL_VERSION
            and isinstance(p.get("id"), int)] if isinstance(predictions, list) else []
    if not ours:
        return None
    ours.sort(key=lambda p: (str(p.get("created_at") or ""), p["id"]))
    latest = ours[-1]
    results = latest.get("result")
    return HeldPrediction(latest["id"], _key(results if isinstance(results, list) else [], latest.get("score")),
                          tuple(p["id"] for p in ours[:-1]))


def _value(control: Control, consensus: Mapping[str, Any]) -> dict[str, Any] | None:
    """The result ``value`` of one control's consensus, as an annotator's result of that tag would hold it."""
    label = consensus.get("label")
    if label is None or label == []:
        return None
    labels = label if isinstance(label, list) else [label]
    if control.tag == "rating":
        return {"rating": labels[0]} if isinstance(labels[0], int | float) else None
    if control.tag == "taxonomy":
        return {"taxonomy": [str(path).split(" / ") for path in labels]}
    return {"choices": [str(choice) for choice in labels]}


def prediction_results(block: Mapping[str, Any], controls: Mapping[str, Control]) -> tuple[list[dict[str, Any]],
                                                                                              float | None]:
    """The results and score of the consensus prediction a task with agreement ``block`` should carry.

    One result per task-level control of :data:`PREDICTED_TAGS` with a consensus; the score is their least
    posterior.

    >>> from plugin.mapping.labelconfig import parse_label_config
    >>> controls = parse_label_config('<View><Text name="t" value="$t"/><Choices name="s" toName="t">'
    ...                               '<Choice value="a"/><Choice value="b"/></Choices></View>')
    >>> prediction_results({"controls": {"s": {"consensus": {"label": "a", "posterior": 0.8}}}}, controls)
    ([{'from_name': 's', 'to_name': 't', 'type': 'choices', 'value': {'choices': ['a']}}], 0.8)
    """
    results: list[dict[str, Any]] = []
    posteriors: list[float] = []
    for name, scores in sorted((block.get("controls") or {}).items()):
        control = controls.get(name)
        consensus = scores.get("consensus") if isinstance(scores, Mapping) else None
        if control is None or control.tag not in PREDICTED_TAGS or control.per_region or not consensus:
            continue
        value = _value(control, consensus)
        if value is None:
            continue
        results.append({"from_name": name, "to_name": control.to_name, "type": control.tag, "value": value})
        posterior = consensus.get("posterior")
        if isinstance(posterior, int | float):
            posteriors.append(float(posterior))
    return results, (min(posteriors) if posteriors else None)


@dataclass(frozen=True)
class PredictionWrite:
    """What a task's consensus prediction needs: create (``id`` None), update, or delete (``results`` None).

    ``delete`` holds the ids of copies to delete (extra ones, or the prediction of a task left without consensus).
    """

    id: int | None
    results: list[dict[str, Any]] | None
    score: float | None
    delete: tuple[int, ...] = ()


def needed_prediction(held: HeldPrediction | None, block: Mapping[str, Any],
                      controls: Mapping[str, Control]) -> PredictionWrite | None:
    """What the task's consensus prediction needs written to match ``block``, or None when it does."""
    results, score = prediction_results(block, controls)
    extra = held.extra if held is not None else ()
    if not results:
        if held is None:
            return None
        return PredictionWrite(None, None, None, delete=(held.id, *extra))
    if held is not None and held.key == _key(results, score) and not extra:
        return None
    return PredictionWrite(held.id if held is not None else None, results, score, delete=extra)
