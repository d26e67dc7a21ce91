"""Which tasks must be written.

Each task's block is diffed against its meta as last read, each distinct one once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin import __version__
from plugin.clock import now_iso
from plugin.mapping.labelconfig import Control
from plugin.settings import ReviewOptions
from plugin.state.blocks import META_KEY, agreement_block, diff_key, needed_write
from plugin.state.task_scores import TaskScores
from plugin.state.tasks import TaskEntries

__all__ = ["BLOCKS_HELD", "stale_tasks"]

BLOCKS_HELD = 10_000
"""Distinct blocks (and answers of the diff) held at once at most in a pass; when full they are let go and found
again. Tasks of equal scores share a block, but with consensus posteriors most of a large project's blocks are
distinct (96% of the demo's): holding each for the whole pass would hold a million blocks."""


def stale_tasks(scores: TaskScores, tasks: TaskEntries, *, review: ReviewOptions,
                controls: Mapping[str, Control] | None = None) -> list[int]:
    """The tasks whose meta, as last read, differs from the block their scores give (ascending).

    Tasks with equal score columns carry equal blocks
    (:meth:`plugin.state.task_scores.TaskScores.score_codes`), so each distinct
    block is built once, and a task whose meta's diff key equals its
    block's (:func:`plugin.state.blocks.diff_key`) is compared no further
    than its mirrored score and overlap (:func:`plugin.state.blocks.needed_write`).
    Any other task is diffed in full, once for all tasks that share its block
    and read alike (the same meta diff key, the same mirrored score and
    overlap, of the same types, and the same consensus prediction; ``controls`` are the label config's, which
    a consensus prediction's results name): a first pass, before any block is written,
    diffs each distinct block once, not every task. At most :data:`BLOCKS_HELD` blocks
    and answers are held at once.
    """
    updated_at = now_iso()
    codes, own = scores.score_codes()
    blocks: dict[int, tuple[dict[str, Any], bytes]] = {}  # per code: its block and the block's diff key
    decided: dict[tuple[Any, ...], bool] = {}  # per code and task as read: whether it needs a write
    stale = []
    for place, (task, code, alone) in enumerate(zip(scores.tasks.tolist(), codes.tolist(), own.tolist(),
                                                    strict=True)):
        held = None if alone else blocks.get(code)
        if held is None:
            block = agreement_block(scores.at(place), version=__version__, updated_at=updated_at)
            try:
                held = (block, diff_key({META_KEY: block}))
            except (TypeError, ValueError):  # not JSON: never taken as current, always diffed in full
                held = (block, b"")
            if not alone:
                if len(blocks) >= BLOCKS_HELD:
                    blocks.clear()
                blocks[code] = held
        block, key = held
        alike = tasks.read_alike(task)
        meta = alike[0]
        current = meta == key  # the meta carries the block: only mirror and overlap remain
        if current and not (review.mirror_to_data or review.escalate or review.consensus_predictions):
            continue
        memo = None if alone or not isinstance(meta, bytes) else (code, *alike)  # a meta not JSON: diffed alone
        try:
            needed = decided.get(memo) if memo is not None else None
        except TypeError:  # a mirrored score or an overlap that is not hashable (any JSON): diffed alone
            memo, needed = None, None
        if needed is None:
            needed = needed_write(tasks[task].read, block, review=review, meta_current=current,
                                  controls=controls) is not None
            if memo is not None:
                if len(decided) >= BLOCKS_HELD:
                    decided.clear()
                decided[memo] = needed
        if needed:
            stale.append(task)
    return sorted(stale)
