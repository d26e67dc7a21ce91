"""VideoRectangle: object tracks matched by box IoU over the frames of the track.

A track is its keyframes (``sequence``: ``frame, x, y, width, height,
enabled``), with the box linearly interpolated between two keyframes as Label
Studio draws it; a keyframe with ``enabled: false`` ends the track there (it
may start again at a later keyframe), and the track ends at its last
keyframe. A keyframe box with a negative width or height (a box drawn up or
to the left; label-studio-frontend's video example stores ``"height":
-15.97``) is read as the same box from its top-left corner. Two tracks'
similarity is the sum of their boxes' IoU over the frames where both exist,
divided by the frames where either exists (a track half as long as the other
scores at most 0.5). Tracks match at
``video_iou`` (0.5). The label is the track's ``labels``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from plugin.mapping.boxes import normalised_box
from plugin.mapping.regions import Family, Geometry, positions
from plugin.settings import MappingOptions

__all__ = ["MAX_FRAMES", "TRACK", "track"]

MAX_FRAMES = 1_000_000  # a track spanning more frames is malformed


def _similarity(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    frames_a, boxes_a = a
    frames_b, boxes_b = b
    common, in_a, in_b = np.intersect1d(frames_a, frames_b, assume_unique=True, return_indices=True)
    union = len(frames_a) + len(frames_b) - len(common)
    if not len(common) or not union:
        return 0.0
    first, second = boxes_a[in_a], boxes_b[in_b]
    width = np.clip(np.minimum(first[:, 2], second[:, 2]) - np.maximum(first[:, 0], second[:, 0]), 0, None)
    height = np.clip(np.minimum(first[:, 3], second[:, 3]) - np.maximum(first[:, 1], second[:, 1]), 0, None)
    overlap = width * height
    area = lambda boxes: (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    iou = np.divide(overlap, area(first) + area(second) - overlap, out=np.zeros_like(overlap),
                    where=area(first) + area(second) - overlap > 0)
    return float(iou.sum() / union)


TRACK = Family("track", "track", _similarity, lambda options: options.video_iou)


def track(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
          options: MappingOptions) -> Geometry | None:
    """A video track's geometry, or None when malformed."""
    sequence = value.get("sequence")
    if not isinstance(sequence, list) or not sequence:
        return None
    keyframes = []
    for entry in sequence:
        if not isinstance(entry, Mapping):
            return None
        parts = positions(entry, ("frame", "x", "y", "width", "height"))
        if parts is None:
            return None
        x, y, width, height = normalised_box(*parts[1:])
        keyframes.append((int(parts[0]), x, y, x + width, y + height, entry.get("enabled", True) is not False))
    keyframes.sort()
    if keyframes[-1][0] - keyframes[0][0] > MAX_FRAMES:
        return None
    frames, boxes = [], []
    for current, following in zip(keyframes, [*keyframes[1:], None]):
        if following is None or not current[5]:
            frames.append(np.array([current[0]]))
            boxes.append(np.array([current[1:5]], dtype=float))
            continue
        span = np.arange(current[0], following[0])
        share = ((span - current[0]) / max(1, following[0] - current[0]))[:, None]
        frames.append(span)
        boxes.append(np.array(current[1:5]) * (1 - share) + np.array(following[1:5]) * share)
    all_frames = np.concatenate(frames)
    all_boxes = np.concatenate(boxes)
    all_frames, first = np.unique(all_frames, return_index=True)
    all_boxes = all_boxes[first]
    if not np.isfinite(all_boxes).all() or math.isnan(float(all_frames[0])):
        return None
    key = tuple(round(v, 3) if isinstance(v, float) else v for frame in keyframes for v in frame[:5])
    return Geometry(TRACK, key, (float(all_frames[0]), float(all_frames[-1])), (all_frames, all_boxes), scope)
