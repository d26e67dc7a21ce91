"""Which family a region result belongs to, and the regions of one task's annotations.

The family follows the result ``type``; a ``labels`` result (a ``<Labels>``
used with a separate tool, or on audio) carries its region's geometry in its
value, and the shape of that value tells the family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.base import reason, usable_result
from plugin.mapping.boxes import box
from plugin.mapping.ellipses import ellipse
from plugin.mapping.keypoints import keypoint
from plugin.mapping.labelconfig import Control
from plugin.mapping.masks import bitmask, brush
from plugin.mapping.polygons import polygon, vector
from plugin.mapping.regions import REGION, Geometry, Region
from plugin.mapping.spans import text_span
from plugin.mapping.timeseries import interval, timeline
from plugin.mapping.video import track
from plugin.settings import MappingOptions

__all__ = ["LABEL_TAGS", "REGION_TAGS", "TOOL_TAGS", "geometry_of", "task_regions"]

Parser = Callable[[Mapping[str, Any], Mapping[str, Any], tuple[Any, ...], MappingOptions], "Geometry | None"]

# Result type -> the parser of its geometry.
_BY_TYPE: dict[str, Parser] = {
    "rectanglelabels": box, "rectangle": box, "ocrlabels": box,
    "polygonlabels": polygon, "polygon": polygon,
    "vectorlabels": vector, "vector": vector,
    "ellipselabels": ellipse, "ellipse": ellipse,
    "keypointlabels": keypoint, "keypoint": keypoint,
    "brushlabels": brush, "brush": brush, "magicwand": brush,
    "bitmasklabels": bitmask, "bitmask": bitmask,
    "videorectangle": track,
    "timelinelabels": timeline,
    "timeserieslabels": interval,
}
# Tags whose results give a region its label.
LABEL_TAGS = frozenset({"labels", "hypertextlabels", "paragraphlabels", "rectanglelabels", "polygonlabels",
                        "vectorlabels", "ellipselabels", "keypointlabels", "brushlabels", "bitmasklabels",
                        "ocrlabels", "videorectangle", "timelinelabels", "timeserieslabels"})
# Plain tools: a region drawn with one and labeled by no labels control has the label "region".
TOOL_TAGS = frozenset({"rectangle", "polygon", "vector", "ellipse", "keypoint", "brush", "magicwand", "bitmask"})
REGION_TAGS = LABEL_TAGS | TOOL_TAGS
_TIME_OBJECTS = frozenset({"audio", "audioplus", "video", "timeseries"})


def _whole(value: Any) -> bool:
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def geometry_of(result: Mapping[str, Any], control: Control, options: MappingOptions) -> Geometry | None:
    """The geometry of a region result, or None when it has none that can be read."""
    value = result["value"]
    scope: tuple[Any, ...] = ()
    for key in ("item_index", "pageIndex"):
        where = result.get(key, value.get(key))
        if where is not None:
            scope = (*scope, f"{key}={where}")
    kind = str(result.get("type", "")).lower() or control.result_type
    parser = _BY_TYPE.get(kind)
    if parser is None:  # labels, hypertextlabels, paragraphlabels: the value's shape tells
        if "sequence" in value:
            parser = track
        elif "rle" in value:
            parser = brush
        elif "imageDataURL" in value:
            parser = bitmask
        elif "points" in value:
            parser = polygon
        elif "vertices" in value:
            parser = vector
        elif "radiusX" in value:
            parser = ellipse
        elif "height" in value and "x" in value:
            parser = box
        elif "x" in value and "y" in value:
            parser = keypoint
        elif "ranges" in value:
            parser = timeline
        elif control.object_tag in _TIME_OBJECTS or not (_whole(value.get("start")) and _whole(value.get("end"))) \
                and not isinstance(value.get("start"), str):
            parser = interval
        else:
            return text_span(value, options)
    return parser(value, result, scope, options)


def _labels(result: Mapping[str, Any]) -> Any:
    value = result["value"]
    kind = str(result.get("type", "")).lower()
    return value.get("labels") if kind == "videorectangle" else value.get(kind)


def task_regions(controls: Mapping[str, Control], submissions: Sequence[Submission], skips: Skips,
                 options: MappingOptions) -> dict[str, list[Region]]:
    """Every region of one task, by the control that labels it (see :mod:`plugin.mapping.regions`).

    Results that share an ``id`` in one annotation are one region: its
    geometry comes from the tool's result (or the labels result, which
    carries a copy), its label from each labels control's result; a region
    with no labels result belongs to its tool with the label ``"region"``.
    """
    region_controls = [c for c in controls.values() if c.tag in REGION_TAGS and not c.problems]
    out: dict[str, list[Region]] = {c.name: [] for c in region_controls}
    by_name = {c.name: c for c in region_controls}
    patterned = [c for c in region_controls if c.pattern]
    for submission in submissions:
        by_id: dict[str, list[tuple[Control, Mapping[str, Any]]]] = {}
        for index, result in enumerate(submission.results):
            name = result.get("from_name")
            control = by_name.get(name) if isinstance(name, str) else None
            if control is None and patterned:
                control = next((c for c in patterned if c.matches(name)), None)
            if control is None or not usable_result(result, control, skips):
                continue
            rid = result.get("id")
            by_id.setdefault(str(rid) if rid is not None else f"#{index}", []).append((control, result))
        for rid, members in by_id.items():
            if len(members) > 1:
                members.sort(key=lambda pair: (pair[0].tag not in TOOL_TAGS, pair[0].name, repr(pair[1].get("value"))))
            geometry = None
            for control, result in members:
                geometry = geometry_of(result, control, options)
                if geometry is not None:
                    break
            if geometry is None:
                for control, _ in members:
                    skips.add(reason(control, "malformed value", "no readable position"))
                continue
            labeled = [(c, r) for c, r in members if c.tag in LABEL_TAGS]
            for control, result in labeled:
                labels = _labels(result)
                instance = str(result.get("from_name")) if control.pattern else ""
                if control.tag == "videorectangle" and labels in (None, []):
                    labels = [REGION]
                if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
                    skips.add(reason(control, "malformed value", "no labels"))
                    continue
                allowed = set(control.labels)
                unknown = [x for x in labels if allowed and x not in allowed and x != REGION]
                for label in unknown:
                    skips.add(reason(control, "label not in the config", repr(label)))
                known = [x for x in labels if x not in unknown]
                if not known:
                    continue
                if len(known) > 1:
                    skips.add(reason(control, "malformed value", "extra labels on one region (the first counts)"),
                              len(known) - 1)
                out[control.name].append(Region(submission.annotator, rid, known[0], geometry, instance))
            if not labeled:
                tool, result = members[0]
                instance = str(result.get("from_name")) if tool.pattern else ""
                out[tool.name].append(Region(submission.annotator, rid, REGION, geometry, instance))
    return out
