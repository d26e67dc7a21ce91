"""Span-like controls as units along continua, for pairwise F1, unitizing alpha and gamma.

The item mapping matches spans into items; the span measures
(:mod:`agreement.units`) want each marked stretch itself. For every
span-like control :func:`plugin.mapping.map_project` keeps, beside its items,
one row per labelled stretch, made from the regions it has already read::

    (task, scope, annotator, label, start, end)

``scope`` is where the region lives within the task (``"item_index=0"``,
``"pageIndex=1"``, ``"paragraph=3"``, a time series or audio channel, a
repeated ``from_name``; ``()`` when none): each ``(task, scope)`` is one
continuum. ``start < end`` are floats, as stored: characters for text (Label Studio 1.23 counts Unicode
code points, see :func:`continuum_length`), characters within one paragraph
for ParagraphLabels (a span across paragraphs is left out: without the task's
data its paragraphs' lengths are unknown here), seconds for audio and video,
the time column's units for time series (a date is seconds since 1970),
frames for TimelineLabels, where frame ``f`` (numbered from 1, ``end``
included) is the stretch ``[f - 1, f)``, so that a video of ``n`` frames is
the continuum ``[0, n)``. A timeline region of several ranges gives one row
per merged range.

Regions that cannot be units still count as items; they are counted in the
skips with the reason (:data:`NOT_A_UNIT`). :func:`continuum_length` gives a
continuum's length from the task's data or its results, and
:func:`span_units` turns the rows into the :class:`agreement.units.Units`
every span measure reads.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from html.parser import HTMLParser
from typing import Any

import numpy as np

from agreement.units import Units
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.base import MAX_MAGNITUDE, MappedControl, finite_number, reason
from plugin.mapping.families import geometry_of
from plugin.mapping.labelconfig import Control
from plugin.mapping.regions import Geometry, Region
from plugin.mapping.spans import SPAN
from plugin.mapping.timeseries import INTERVAL
from plugin.settings import MappingOptions

__all__ = ["NOT_A_UNIT", "SPAN_COLUMNS", "SpanRow", "continuum_extents", "continuum_length", "is_span_control",
           "span_rows", "span_units", "submitted_pairs"]

SPAN_COLUMNS = ("task", "scope", "annotator", "label", "start", "end")
SpanRow = tuple[int, tuple[Any, ...], str, str, float, float]

_LEFT_OUT = "left out of F1, unitizing alpha and gamma"
# What a region that cannot be a unit is counted as: (what, detail) of a skip reason.
NOT_A_UNIT = {
    "xpath": ("span without character offsets", f"XPath only; {_LEFT_OUT}"),
    "paragraphs": ("span across paragraphs", f"each paragraph is a continuum of its own; {_LEFT_OUT}"),
    "empty": ("empty span", f"start equals end: no extent for span measures; {_LEFT_OUT}"),
    "instant": ("instant", f"start equals end: no extent for span measures; {_LEFT_OUT}"),
    "negative": ("span before the start of its continuum", f"start below 0; {_LEFT_OUT}"),
    "shape": ("region is not a span", f"a shape, not a stretch of text or time; {_LEFT_OUT}"),
}

_SPAN_TAGS = frozenset({"hypertextlabels", "paragraphlabels", "timeserieslabels", "timelinelabels"})
_SPAN_OBJECTS = frozenset({"", "text", "hypertext", "paragraphs", "audio", "audioplus", "video", "timeseries"})
_TEXT_OBJECTS = frozenset({"text", "hypertext"})


def is_span_control(control: Control) -> bool:
    """Whether ``control`` marks stretches of one dimension: its regions are units for the span measures.

    HyperTextLabels, ParagraphLabels, TimeSeriesLabels and TimelineLabels;
    Labels on text, hypertext, paragraphs, audio, video and time series (and
    Labels whose object is unknown, as in an export read without its config).
    """
    return control.tag in _SPAN_TAGS or (control.tag == "labels" and control.object_tag in _SPAN_OBJECTS)


def _paragraph(position: Any) -> int | None:
    if isinstance(position, str) and position.isdigit():
        return int(position)
    if isinstance(position, int) and not isinstance(position, bool) and position >= 0:
        return position
    return None


def _stretches(control: Control, geometry: Geometry) -> tuple[tuple[Any, ...], tuple[tuple[float, float], ...]] | str:
    """A region's scope within the task and stretches ``(start, end)``, or the key of why it has none."""
    scope = geometry.scope
    if geometry.family is SPAN:
        extent = geometry.shape[1]
        if extent is None:
            first, start, last, end = geometry.key
            if isinstance(first, str) and first.startswith("/"):
                return "xpath"
            index = _paragraph(first)
            if index is None or index != _paragraph(last):
                return "paragraphs"
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (start, end)):
                return "paragraphs"
            scope, extent = (*scope, f"paragraph={index}"), (float(start), float(end))
        parts: tuple[tuple[float, float], ...] = (extent,)
        short = "empty"
    elif geometry.family is INTERVAL:
        parts = geometry.shape
        if control.tag == "timelinelabels":  # frames from 1, end included: frame f is [f - 1, f)
            parts = tuple((start - 1.0, end - 1.0) for start, end in parts)
        short = "instant"
    else:
        return "shape"
    if any(end <= start for start, end in parts):
        return short
    if min(start for start, _ in parts) < 0:
        return "negative"
    return scope, parts


def span_rows(task: int, control: Control, items: Iterable[tuple[str, Sequence[Region]]],
              skips: Skips) -> list[SpanRow]:
    """Rows ``(task, scope, annotator, label, start, end)`` of one task's matched regions of ``control``.

    ``items`` are :func:`plugin.mapping.regions.match_regions`'s groups; every
    region in them gives its rows, or is counted in ``skips`` with the reason
    it cannot be a unit (it stays an item). Annotators and labels are
    interned, so a row holds its tuple and two floats of its own (about
    150 bytes; 3,260 spans of the LEOKA project take 0.5 MB).
    """
    rows: list[SpanRow] = []
    for _, group in items:
        for region in group:
            found = _stretches(control, region.geometry)
            if isinstance(found, str):
                skips.add(reason(control, *NOT_A_UNIT[found]))
                continue
            scope, parts = found
            if region.instance:
                scope = (*scope, region.instance)
            annotator, label = sys.intern(region.annotator), sys.intern(region.label)
            rows.extend((task, scope, annotator, label, start, end) for start, end in parts)
    return rows


def submitted_pairs(submissions: Mapping[int, Sequence[Submission]]) -> tuple[tuple[int, str], ...]:
    """``(task, annotator)`` for every annotator who submitted each task: who was present on its continua."""
    return tuple((task, sys.intern(submission.annotator)) for task, subs in submissions.items() for submission in subs)


class _TextContent(HTMLParser):
    """The text nodes of an HTML document, joined: what a browser's ``textContent`` holds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _text_content(html: str) -> str:
    parser = _TextContent()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def _paragraph_text(paragraphs: Any, scope: tuple[Any, ...]) -> str | None:
    """The ``text`` of the paragraph a scope ``(..., "paragraph=N")`` names, or None."""
    index = _paragraph(scope[-1].removeprefix("paragraph=")) if scope and isinstance(scope[-1], str) \
        and scope[-1].startswith("paragraph=") else None
    if index is None or not isinstance(paragraphs, list) or index >= len(paragraphs):
        return None
    paragraph = paragraphs[index]
    text = paragraph.get("text") if isinstance(paragraph, Mapping) else None
    return text if isinstance(text, str) else None


def _number(value: Any) -> float | None:
    number = finite_number(value, limit=MAX_MAGNITUDE)
    return None if number is None or number < 0 else number


def _media_length(control: Control, results: Iterable[Mapping[str, Any]]) -> float | None:
    """The media's length recorded in the results on ``control``'s object, or None."""
    objects = set(control.to_name.split(","))
    found: list[float] = []
    for result in results:
        if result.get("to_name") not in objects:
            continue
        value = result.get("value") if isinstance(result.get("value"), Mapping) else {}
        if control.object_tag in ("audio", "audioplus"):
            length = _number(result.get("original_length"))
        elif control.tag == "timelinelabels":
            length = _number(value.get("framesCount"))
        else:
            length = _number(value.get("duration"))
        if length is not None:
            found.append(length)
    return max(found) if found else None


def _last_end(control: Control, results: Iterable[Mapping[str, Any]], scope: tuple[Any, ...]) -> float:
    options = MappingOptions()
    last = 0.0
    for result in results:
        if not control.matches(result.get("from_name")) or not isinstance(result.get("value"), Mapping):
            continue
        geometry = geometry_of(result, control, options)
        if geometry is None:
            continue
        found = _stretches(control, geometry)
        if isinstance(found, str):
            continue
        where, parts = found
        if control.pattern:
            where = (*where, str(result.get("from_name")))
        if where == scope:
            last = max(last, *(end for _, end in parts))
    return last


def continuum_length(control: Control, task_data: Mapping[str, Any], results: Iterable[Mapping[str, Any]], *,
                     scope: tuple[Any, ...] = (), last_end: float | None = None) -> float | None:
    """The length of one task's continuum for ``control``.

    None when the task and its results do not give it.

    Parameters
    ----------
    control : Control
        A span-like control (:func:`is_span_control`).
    task_data : mapping
        The task's ``data``.
    results : iterable of mapping
        The task's result items (of every annotator; results of other
        controls are read for the media's length).
    scope : tuple, keyword-only
        The continuum's scope, as in the span rows; the last unit is looked
        for there.
    last_end : float, keyword-only, optional
        The end of the last unit in ``scope`` when the caller has the span
        rows (0 for none); by default it is read from ``results``.

    Returns
    -------
    float or None
        - Text (``<Text>``): the number of Unicode code points of
          ``task_data[control.object_value]``. Label Studio 1.23 stores a
          text span's ``start`` and ``end`` as the editor's global offsets,
          which count code points (web/libs/editor/src/tags/object/RichText/
          domManager.ts splits the text with ``[...text]``; model.js: "global
          offset in codepoints"), so an emoji is one position, as in a Python
          ``str``. Releases of 2021 stored JavaScript string offsets (UTF-16
          code units; label-studio issue 1347).
        - HyperText: the code points of the HTML's text content, which its
          ``globalOffsets`` count; Label Studio also counts a line break it
          displays at a ``<br>`` or between blocks, so this may fall short.
        - Audio: ``original_length`` (seconds) of a result on the audio
          (web/libs/editor/src/regions/AudioRegion.js: "length of the
          original audio").
        - Video: ``value.duration`` (seconds), or for TimelineLabels
          ``value.framesCount`` (frames), which a ``videorectangle`` result
          on the video carries (web/libs/editor/src/regions/VideoRegion.js,
          ``serialize``); timeline results carry neither.
        - Paragraphs: the code points of the ``text`` of the paragraph the
          scope names (``"paragraph=N"``, the index into the task's list);
          each paragraph is a continuum of its own.
        - Time series, text whose value is not a string, an unknown object:
          None. The caller then takes the extent of the units.

        A known length is never less than the end of the last unit of
        ``control`` in ``scope`` (offsets stored by another version of Label
        Studio may run past the text).
    """
    results = list(results)
    length: float | None = None
    if control.object_tag in _TEXT_OBJECTS and control.object_value:
        text = task_data.get(control.object_value)
        if isinstance(text, str):
            length = float(len(_text_content(text) if control.object_tag == "hypertext" else text))
    elif control.object_tag == "paragraphs" and control.object_value:
        text = _paragraph_text(task_data.get(control.object_value), scope)
        if text is not None:
            length = float(len(text))
    elif control.object_tag in ("audio", "audioplus", "video"):
        length = _media_length(control, results)
    if length is None:
        return None
    return max(length, _last_end(control, results, scope) if last_end is None else last_end)


Continuum = tuple[int, tuple[Any, ...]]


def span_units(mapped: MappedControl, *, lengths: Mapping[Continuum, float | None] | None = None) -> Units:
    """The :class:`agreement.units.Units` of a span-like control's rows.

    One continuum per ``(task, scope)``.

    Parameters
    ----------
    mapped : MappedControl
        A span-like control as :func:`plugin.mapping.map_project` maps it
        (with :attr:`~plugin.mapping.base.MappedControl.spans`).
    lengths : mapping, keyword-only
        A continuum's length by ``(task, scope)``, as :func:`continuum_length`
        gives it; missing or None where unknown.

    Returns
    -------
    Units
        ``mapped.units`` when it holds them. Else ``docs`` are the ``(task, scope)`` pairs, in the order of the rows;
        a task that annotators submitted with no unit marked by anyone is the
        continuum ``(task, ())``. Every annotator who submitted a task is
        present on each of its continua. A continuum of known length is
        ``[0, length)`` (never shorter than its last unit); one of unknown
        length is the extent of its units, from the first start to the last
        end, moved to begin at 0 (a time series' time column need not begin
        at 0, nor a text span's unit at the text's start), and is empty when
        it has no unit.

    Raises
    ------
    ValueError
        If ``mapped`` is not a span-like control.
    """
    if mapped.spans is None:
        raise ValueError(f"{mapped.control.describe()} is not a span-like control: it has no span rows to build "
                         f"units from.")
    if mapped.units is not None:  # built already, with its lengths
        return mapped.units
    rows = mapped.spans
    keys: dict[Continuum, int] = {}
    for task, scope, *_ in rows:
        keys.setdefault((task, scope), len(keys))
    submitted = mapped.submitted or ()
    marked = {task for task, _ in keys}
    for task, _ in submitted:
        if task not in marked:
            marked.add(task)
            keys.setdefault((task, ()), len(keys))
    annotators = tuple(sorted({name for _, name in submitted} | {row[2] for row in rows}))
    who = {annotator: i for i, annotator in enumerate(annotators)}
    labels = tuple(dict.fromkeys([*mapped.control.labels, *sorted({row[3] for row in rows})]))
    code = {label: i for i, label in enumerate(labels)}
    n = len(rows)
    doc = np.fromiter((keys[(row[0], row[1])] for row in rows), dtype=np.intp, count=n)
    annotator = np.fromiter((who[row[2]] for row in rows), dtype=np.intp, count=n)
    start = np.fromiter((row[4] for row in rows), dtype=float, count=n)
    end = np.fromiter((row[5] for row in rows), dtype=float, count=n)
    known = lengths or {}
    given = np.array([np.nan if known.get(key) is None else float(known[key]) for key in keys], dtype=float)
    offset, extent = continuum_extents(doc, start, end, given)
    continua: dict[int, list[int]] = {}
    for (task, _), index in keys.items():
        continua.setdefault(task, []).append(index)
    present = np.zeros((len(keys), len(annotators)), dtype=bool)
    for task, name in submitted:
        present[continua.get(task, []), who[name]] = True
    present[doc, annotator] = True
    return Units(doc, annotator, np.fromiter((code[row[3]] for row in rows), dtype=np.intp, count=n),
                 start - offset[doc], end - offset[doc], tuple(keys), annotators, labels, present, extent)


def continuum_extents(doc: np.ndarray, start: np.ndarray, end: np.ndarray,
                      given: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each continuum begins in its units' coordinates, and its length (see :func:`span_units`).

    A continuum of known length (``given``; NaN where unknown) begins at 0 and
    is never shorter than its last unit; one of unknown length is the extent
    of its units, from the first start (its offset) to the last end, and is
    empty without units. ``doc`` is each unit's continuum.
    """
    first, last = np.full(len(given), np.inf), np.zeros(len(given))
    np.minimum.at(first, doc, start)
    np.maximum.at(last, doc, end)
    unknown = np.isnan(given)
    offset = np.where(unknown & np.isfinite(first), first, 0.0)
    return offset, np.maximum(np.where(unknown, last - offset, np.fmax(given, last)), 0.0)
