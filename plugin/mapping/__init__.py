"""From Label Studio results to items with one label per annotator, one module per family of tags.

======================================================= ============ ==========================================
tag                                                     module       item / label / level
======================================================= ============ ==========================================
Choices (single), Pairwise                              choices      task / choice / nominal
Choices (multiple)                                      choices      task x label / yes, no / nominal
Rating                                                  numeric      task / rating / ordinal
Number                                                  numeric      task / number / interval
DateTime                                                dates        task / days since 1970 / interval
TextArea                                                text         task / normalized text / nominal
Taxonomy                                                taxonomy     task x path / yes, no / nominal
Ranker                                                  ranker       element / bucket (nominal) or rank (ordinal)
Labels, HyperTextLabels, ParagraphLabels (text)         spans        matched span / label / nominal
Labels (audio, video), TimeSeriesLabels, TimelineLabels timeseries   matched interval / label / nominal
RectangleLabels, Rectangle, OcrLabels                   boxes        matched box / label / nominal
PolygonLabels, Polygon, VectorLabels, Vector            polygons     matched polygon / label / nominal
EllipseLabels, Ellipse                                  ellipses     matched ellipse / label / nominal
KeyPointLabels, KeyPoint                                keypoints    matched point / label / nominal
BrushLabels, Brush, MagicWand, BitmaskLabels, Bitmask   masks        matched mask / label / nominal
VideoRectangle                                          video        matched track / label / nominal
Relations                                               relations    matched region pair / relation / nominal
any of the first group with perRegion="true"            (its own)    matched region / its label / its level
Chat                                                    (none)       not scored: messages are content
======================================================= ============ ==========================================

Region families share :mod:`plugin.mapping.regions`; each contributes only
its geometry. Span-like controls also keep each labelled stretch as a unit
for the span measures (:attr:`MappedControl.spans`, :mod:`plugin.mapping.span_units`).
Every result is either in a row or counted in ``skips`` under a reason that
names the control and its tag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.base import MappedControl, Unit, reason, task_units
from plugin.mapping.boxes import NO_BOX
from plugin.mapping.choices import map_choices, map_pairwise
from plugin.mapping.dates import map_datetime
from plugin.mapping.families import REGION_TAGS, TOOL_TAGS, task_regions
from plugin.mapping.labelconfig import CONTROL_TAGS, Control, tag_of_result_type
from plugin.mapping.numeric import map_number, map_rating
from plugin.mapping.ranker import map_ranker
from plugin.mapping.regions import REGION, Region, RegionItems, match_regions, region_rows
from plugin.mapping.relations import map_relations
from plugin.mapping.span_units import is_span_control, span_rows, submitted_pairs
from plugin.mapping.spans import NO_SPAN
from plugin.mapping.taxonomy import map_taxonomy
from plugin.mapping.text import map_textarea
from plugin.settings import MappingOptions

__all__ = ["NO_REGION", "UNIT_MAPPERS", "MappedControl", "absent_label", "count_unmapped_results", "map_control",
           "map_project"]

NO_REGION = "no region"

UnitMapper = Callable[[Control, Sequence[Unit], Skips], MappedControl]
UNIT_MAPPERS: dict[str, UnitMapper] = {
    "choices": map_choices,
    "pairwise": map_pairwise,
    "rating": map_rating,
    "number": map_number,
    "datetime": map_datetime,
    "taxonomy": map_taxonomy,
    "textarea": map_textarea,
    "ranker": map_ranker,
}
_SPAN_OBJECTS = frozenset({"", "text", "hypertext", "paragraphs"})
_UNSUPPORTED = {"chat": "chat messages are content the annotator wrote, not a judgement"}


def absent_label(control: Control) -> str:
    """The label of an annotator who submitted the task but marked nothing where others marked a region."""
    if control.tag in ("hypertextlabels", "paragraphlabels") or (
            control.tag == "labels" and control.object_tag in _SPAN_OBJECTS):
        return NO_SPAN
    if control.tag in ("rectanglelabels", "rectangle", "ocrlabels"):
        return NO_BOX
    return NO_REGION


def _empty(control: Control) -> MappedControl:
    return MappedControl(control, "nominal", ())


def count_unmapped_results(controls: Mapping[str, Control], submissions: Mapping[int, list[Submission]],
                    skips: Skips) -> None:
    """Count the results that cannot be mapped.

    These are results of controls the config lacks, of unsupported tags, and of controls with config problems.
    """
    patterned = [c for c in controls.values() if c.pattern]
    # a usable control's own results (the usual case) are its mapping's to read or count
    plain = {name: CONTROL_TAGS.get(c.tag) for name, c in controls.items()
             if not c.problems and c.tag not in _UNSUPPORTED and CONTROL_TAGS.get(c.tag) not in (None, "relation")}
    for task_submissions in submissions.values():
        for submission in task_submissions:
            for result in submission.results:
                name = result.get("from_name")
                if type(name) is str and name in plain and plain[name] == result.get("type"):
                    continue
                kind = str(result.get("type", "")).lower()
                if kind == "relation":
                    control = controls.get("relations")
                    if control is None:
                        skips.add("control not in the config (a relation; add <Relations/> to the labeling config "
                                  "to score relations): Relations")
                    elif control.problems:
                        skips.add(reason(control, "config problem", control.problems[0]))
                    continue
                control = controls.get(name) if isinstance(name, str) else None
                if control is None:
                    control = next((c for c in patterned if c.matches(name)), None)
                if control is None:
                    tag = tag_of_result_type(kind)
                    shown = Control(name=str(name), tag=tag).tag_name if tag else f"type {kind!r}"
                    skips.add(f"control not in the config: {shown} {name!r}")
                elif control.problems:
                    skips.add(reason(control, "config problem", control.problems[0]))
                elif control.tag in _UNSUPPORTED:
                    skips.add(reason(control, "unsupported tag", _UNSUPPORTED[control.tag]))


def _region_units(control: Control, submissions: Mapping[int, list[Submission]],
                  groups: Mapping[int, list[tuple[str, str, list[Region]]]], skips: Skips) -> list[Unit]:
    """Per-region units: for each matched region, each annotator who has it and their answers on it."""
    units = []
    for task, task_submissions in submissions.items():
        by_annotator = {s.annotator: s for s in task_submissions}
        answers: dict[tuple[str, str], list[Mapping[str, object]]] = {}
        for submission in task_submissions:
            for result in submission.results:
                if not control.matches(result.get("from_name")):
                    continue
                kind = str(result.get("type", "")).lower()
                if (kind and kind != control.result_type) or not isinstance(result.get("value"), Mapping):
                    skips.add(reason(control, "malformed value", "not a result of this control"))
                    continue
                answers.setdefault((submission.annotator, str(result.get("id"))), []).append(result)
        used: set[tuple[str, str]] = set()
        for owner, item, group in groups.get(task, []):
            for region in group:
                if region.annotator in by_annotator and (region.annotator, region.rid) not in used:
                    used.add((region.annotator, region.rid))
                    units.append(Unit(task, f"{item}/{owner}", region.annotator,
                                      tuple(answers.get((region.annotator, region.rid), ()))))
        for key, results in answers.items():
            if key not in used:
                skips.add(reason(control, "malformed value", "per-region answer whose region was not scored"),
                          len(results))
    return units


def map_project(controls: Mapping[str, Control], submissions: Mapping[int, list[Submission]], skips: Skips,
                options: MappingOptions, *, count_unmapped: bool = True,
                with_spans: bool = True) -> dict[str, MappedControl]:
    """Map every control of a project, for the tasks in ``submissions`` (all of them, or one).

    The one entry point of the mapping: a batch read maps every task at once,
    a live update maps the one task it touched, and both give the same rows
    for that task. Per-region controls and relations are mapped on the
    regions matched here. Every result is scored or counted in ``skips``
    (``count_unmapped=False`` leaves out the results of controls not in
    ``controls``, for mapping a subset; ``with_spans=False`` maps span
    controls to their aligned items only, without the spans behind F1 and
    gamma).
    Controls with a config problem, and unsupported tags, are returned with no
    rows; their results are counted with the reason.
    """
    if count_unmapped:
        count_unmapped_results(controls, submissions, skips)
    usable = {name: c for name, c in controls.items() if not c.problems and c.tag not in _UNSUPPORTED}
    region_controls = {name: c for name, c in usable.items() if c.tag in REGION_TAGS}
    out: dict[str, MappedControl] = {name: _empty(c) for name, c in controls.items() if name not in usable}

    rows: dict[str, list[tuple[object, ...]]] = {name: [] for name in region_controls}
    spans: dict[str, list[tuple[object, ...]]] = {name: [] for name, c in region_controls.items()
                                                  if with_spans and is_span_control(c)}
    groups: dict[int, list[tuple[str, str, list[Region]]]] = {}
    items: RegionItems = {}
    submitted = submitted_pairs(submissions) if spans else None
    for task, task_submissions in submissions.items():
        regions = task_regions(region_controls, task_submissions, skips, options)
        for name in sorted(regions):
            control = region_controls[name]
            matched = match_regions(task, regions[name], control, skips, options)
            absent = absent_label(control) if options.absent_span == "label" else None
            rows[name].extend(region_rows(task, matched, task_submissions, absent))
            if name in spans:
                spans[name].extend(span_rows(task, control, matched, skips))
            for item, group in matched:
                groups.setdefault(task, []).append((name, item, group))
                for region in group:
                    items.setdefault(task, {}).setdefault((region.annotator, region.rid), item)
    for name, control in region_controls.items():
        absent = absent_label(control) if options.absent_span == "label" else None
        labels = control.labels or ((REGION,) if control.tag in TOOL_TAGS else ())
        categories = (*labels, absent) if labels and absent else (labels or None)
        out[name] = MappedControl(control, "nominal", tuple(rows[name]), categories=categories,
                                  spans=tuple(spans[name]) if name in spans else None,
                                  submitted=submitted if name in spans else None)

    for name, control in usable.items():
        if control.tag in UNIT_MAPPERS:
            units = (_region_units(control, submissions, groups, skips) if control.per_region
                     else task_units(control, submissions, skips))
            out[name] = UNIT_MAPPERS[control.tag](control, units, skips)
        elif control.tag == "relations":
            out[name] = map_relations(control, submissions, items, skips, options)
    return dict(sorted(out.items()))


def map_control(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips,
                options: MappingOptions, *, controls: Mapping[str, Control] | None = None) -> MappedControl:
    """Map one control, counting only its own skips.

    Prefer :func:`map_project`, which maps every control once.

    A per-region control or relations find their regions among ``controls``
    (the project's); without them their answers are counted as skipped.
    """
    scope = dict(controls) if controls is not None else {}
    scope[control.name] = control
    own = Skips()
    mapped = map_project(scope, submissions, own, options, count_unmapped=False)[control.name]
    for text, count in own.reasons.items():
        if text.endswith(control.describe()):
            skips.add(text, count)
    return mapped
