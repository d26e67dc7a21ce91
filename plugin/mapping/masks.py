"""BrushLabels, Brush, MagicWand, BitmaskLabels and Bitmask: regions matched by mask IoU.

Brush masks are Label Studio's RLE, decoded by the converter that ships in
label-studio-sdk (``label_studio_sdk.converter.brush.decode_rle``) into RGBA
pixels of ``original_height x original_width``; a pixel belongs to the mask
when its alpha is above zero. Bitmasks are a PNG data URL, read with Pillow.

Decision: masks are compared at reduced resolution. A mask whose longer side
exceeds ``mask_size`` pixels (512) is reduced by an integer factor, a cell
belonging to the mask when any of its pixels does. Two masks that touch along
an edge share no cell of full resolution, but may share cells when reduced,
so IoU at reduced resolution can only be higher than at full resolution, by
at most one cell's width along each edge. Memory is ``mask_size`` squared
bits per region at most.
"""

from __future__ import annotations

import base64
import hashlib
import io
import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from plugin.mapping.regions import Family, Geometry
from plugin.settings import MappingOptions

__all__ = ["MASK", "bitmask", "brush", "mask_geometry", "reduce_mask"]


def _iou(a: tuple[int, np.ndarray], b: tuple[int, np.ndarray]) -> float:
    if a[0] != b[0] or a[1].shape != b[1].shape:
        return 0.0
    intersection = np.count_nonzero(a[1] & b[1])
    union = np.count_nonzero(a[1] | b[1])
    return intersection / union if union else 0.0


MASK = Family("mask", "mask", _iou, lambda options: options.mask_iou)


def reduce_mask(mask: np.ndarray, size: int) -> tuple[int, np.ndarray]:
    """Reduce the mask so that its longer side is at most ``size``.

    Returns ``(factor, reduced)``: the mask reduced by the least integer factor that brings its longer side to
    ``size``.
    """
    factor = max(1, math.ceil(max(mask.shape) / size))
    if factor == 1:
        return 1, mask
    height, width = (math.ceil(n / factor) * factor for n in mask.shape)
    padded = np.zeros((height, width), dtype=bool)
    padded[:mask.shape[0], :mask.shape[1]] = mask
    return factor, padded.reshape(height // factor, factor, width // factor, factor).any(axis=(1, 3))


def mask_geometry(mask: np.ndarray, scope: tuple[Any, ...], options: MappingOptions) -> Geometry | None:
    """A mask's geometry (None when empty); its bounds are its columns in percent of the image width."""
    columns = np.flatnonzero(mask.any(axis=0))
    if columns.size == 0:
        return None
    width = mask.shape[1]
    factor, reduced = reduce_mask(mask, options.mask_size)
    digest = hashlib.sha1(np.packbits(mask).tobytes() + repr(mask.shape).encode()).hexdigest()[:16]
    return Geometry(MASK, (digest,), (100 * columns[0] / width, 100 * (columns[-1] + 1) / width),
                    (factor, reduced), scope)


def _size(result: Mapping[str, Any]) -> tuple[int, int] | None:
    width, height = result.get("original_width"), result.get("original_height")
    if all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 100_000 for v in (width, height)):
        return int(height), int(width)  # type: ignore[arg-type]
    return None


def brush(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
          options: MappingOptions) -> Geometry | None:
    """A brush mask's geometry from its RLE, or None when malformed, empty or of the wrong size."""
    rle, size = value.get("rle"), _size(result)
    if value.get("format", "rle") != "rle" or not isinstance(rle, list) or not rle or size is None \
            or not all(isinstance(v, numbers.Integral) and 0 <= v <= 255 for v in rle):
        return None
    try:
        from label_studio_sdk.converter.brush import decode_rle  # only a brush needs the SDK's decoder

        pixels = decode_rle(rle)
    except (IndexError, ValueError):
        return None
    if pixels.size != size[0] * size[1] * 4:
        return None
    return mask_geometry(pixels.reshape(size[0], size[1], 4)[:, :, 3] > 0, scope, options)


def bitmask(value: Mapping[str, Any], result: Mapping[str, Any], scope: tuple[Any, ...],
            options: MappingOptions) -> Geometry | None:
    """A bitmask's geometry from its PNG data URL, or None when malformed or empty."""
    from PIL import Image, UnidentifiedImageError

    url = value.get("imageDataURL")
    if not isinstance(url, str) or "," not in url:
        return None
    try:
        image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
        pixels = np.asarray(image.convert("RGBA"))
    except (ValueError, OSError, UnidentifiedImageError):
        return None
    return mask_geometry(pixels[:, :, 3] > 0, scope, options)
