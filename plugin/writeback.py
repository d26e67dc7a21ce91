"""Task meta: the agreement block each task carries, merged into whatever else is there.

Label Studio replaces a task's whole ``meta`` on update, so the block is
merged into the meta as read, every other key kept. A task is written only
when its block changed (``updated_at`` aside), so a second sync with nothing
new writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin.scoring import TaskScore

__all__ = ["META_KEY", "agreement_block", "merged_meta"]

META_KEY = "agreement"
_VOLATILE = ("updated_at",)


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


def _stable(block: Any) -> Any:
    if isinstance(block, Mapping):
        return {k: _stable(v) for k, v in block.items() if k not in _VOLATILE}
    if isinstance(block, list):
        return [_stable(v) for v in block]
    return block


def merged_meta(existing: Any, block: Mapping[str, Any]) -> dict[str, Any] | None:
    """The task's new meta with ``block`` merged in, or None when nothing would change.

    A task that never had a block and has nothing to score (no annotations)
    is left alone.
    """
    meta = dict(existing) if isinstance(existing, Mapping) else {}
    current = meta.get(META_KEY)
    if isinstance(current, Mapping) and _stable(current) == _stable(block):
        return None
    if current is None and block.get("n_annotations", 0) == 0:
        return None
    meta[META_KEY] = dict(block)
    return meta
