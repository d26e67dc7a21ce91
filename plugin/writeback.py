"""Task meta: the agreement block each task carries, merged into whatever else is there.

Label Studio replaces a task's whole ``meta`` on update, so the block is
merged into the meta as read, every other key kept. A task is written only
when its block changed (``updated_at`` aside), so a second sync with nothing
new writes nothing.

A task's alpha is scored against the project's expected disagreement, which
moves a little with every annotation anywhere in the project. Rewriting every
task for such drift would cost Label Studio minutes per event, so alpha values
count as changed only when they move by more than a tolerance (0.01 by
default); SPA, counts and flags are compared exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin.scoring import TaskScore

__all__ = ["ALPHA_TOLERANCE", "META_KEY", "agreement_block", "merged_meta"]

META_KEY = "agreement"
ALPHA_TOLERANCE = 0.01
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


def _same(old: Any, new: Any, tolerance: float, key: str = "") -> bool:
    """Whether two blocks are equal, ``updated_at`` aside and ``alpha`` values within ``tolerance``."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        keys = (set(old) | set(new)) - set(_VOLATILE)
        return all(k in old and k in new and _same(old[k], new[k], tolerance, k) for k in keys)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b, tolerance) for a, b in zip(old, new, strict=True))
    if key == "alpha" and isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return abs(old - new) <= tolerance
    return bool(old == new)


def merged_meta(existing: Any, block: Mapping[str, Any], *, alpha_tolerance: float = ALPHA_TOLERANCE
                ) -> dict[str, Any] | None:
    """The task's new meta with ``block`` merged in, or None when nothing would change.

    A task that never had a block and has nothing to score (no annotations)
    is left alone.
    """
    meta = dict(existing) if isinstance(existing, Mapping) else {}
    current = meta.get(META_KEY)
    if isinstance(current, Mapping) and _same(current, block, alpha_tolerance):
        return None
    if current is None and block.get("n_annotations", 0) == 0:
        return None
    meta[META_KEY] = dict(block)
    return meta
