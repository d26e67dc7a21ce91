"""The labeling config: which control tags a project has, their types and their labels.

Every control tag Label Studio 1.23 ships is read (see :data:`CONTROL_TAGS`).
A problem in one control's config (a label listed twice, a broken attribute)
is kept on that control as :attr:`Control.problems`: the mapping then skips
that control with the reason and scores the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from plugin.bugs import InputError

__all__ = ["CONTROL_TAGS", "INFERRED", "PASS_CONFIG", "TAG_NAMES", "Control", "infer_controls", "parse_label_config",
           "tag_of_result_type", "was_inferred"]

# Control tag (lower case) -> the result ``type`` Label Studio stores for it.
CONTROL_TAGS: dict[str, str] = {
    "choices": "choices",
    "labels": "labels",
    "hypertextlabels": "hypertextlabels",
    "paragraphlabels": "paragraphlabels",
    "rating": "rating",
    "number": "number",
    "taxonomy": "taxonomy",
    "textarea": "textarea",
    "pairwise": "pairwise",
    "ranker": "ranker",
    "datetime": "datetime",
    "rectanglelabels": "rectanglelabels",
    "rectangle": "rectangle",
    "polygonlabels": "polygonlabels",
    "polygon": "polygon",
    "ellipselabels": "ellipselabels",
    "ellipse": "ellipse",
    "keypointlabels": "keypointlabels",
    "keypoint": "keypoint",
    "brushlabels": "brushlabels",
    "brush": "brush",
    "magicwand": "magicwand",
    "bitmasklabels": "bitmasklabels",
    "bitmask": "bitmask",
    "vectorlabels": "vectorlabels",
    "vector": "vector",
    "ocrlabels": "ocrlabels",
    "videorectangle": "videorectangle",
    "timelinelabels": "timelinelabels",
    "timeserieslabels": "timeserieslabels",
    "relations": "relation",
    "chat": "chatmessage",
}

# How Label Studio spells each tag, for reasons in the skip report.
TAG_NAMES: dict[str, str] = {tag: name for name in (
    "Choices", "Labels", "HyperTextLabels", "ParagraphLabels", "Rating", "Number", "Taxonomy", "TextArea", "Pairwise",
    "Ranker", "DateTime", "RectangleLabels", "Rectangle", "PolygonLabels", "Polygon", "EllipseLabels", "Ellipse",
    "KeyPointLabels", "KeyPoint", "BrushLabels", "Brush", "MagicWand", "BitmaskLabels", "Bitmask", "VectorLabels",
    "Vector", "OcrLabels", "VideoRectangle", "TimelineLabels", "TimeSeriesLabels", "Relations", "Chat",
) for tag in (name.lower(),)}

# Tags whose results are answers about a region when ``perRegion="true"``.
PER_REGION_TAGS = frozenset({"choices", "textarea", "number", "rating", "taxonomy", "datetime"})
# Rating scales above this many points take their categories from the values seen (memory bounded by the data).
MAX_RATING_CATEGORIES = 1000
_DATA_KEY = re.compile(r"\$([A-Za-z_][\w-]*)")


def tag_of_result_type(kind: str) -> str | None:
    """The control tag whose results have ``type`` ``kind`` (lower case), or None."""
    for tag, result_type in CONTROL_TAGS.items():
        if result_type == kind:
            return tag
    return None


@dataclass(frozen=True)
class Control:
    """One control tag of the labeling config.

    Attributes
    ----------
    name : str
        Its ``name``: the ``from_name`` of its results. Inside a ``<Repeater>``
        it holds the index flag (``action_{{idx}}``), see :attr:`pattern`.
    tag : str
        The tag, lower case (``choices``, ``labels``, ``rating``, ...).
    to_name : str
        The object tag it labels.
    labels : tuple of str
        Its ``<Choice>`` / ``<Label>`` values as Label Studio stores them in
        results (the ``alias`` when one is given, else the ``value``), in
        config order; taxonomy: every path, joined with " / "; ranker: its
        bucket names. Empty for tags without a fixed set.
    multiple : bool
        ``choice="multiple"`` on Choices; Taxonomy unless ``maxUsages="1"``.
    max_rating : int
        Rating's ``maxRating`` (5 by default); 0 when unknown (inferred controls).
    per_region : bool
        ``perRegion="true"``: each answer belongs to one region of another control.
    pattern : str
        Inside a ``<Repeater>``: a regular expression the ``from_name`` of its
        results matches (``action_0``, ``action_1``, ...); empty otherwise.
    object_tag : str
        The tag (lower case) of the object it labels (``text``, ``audio``, ``image``, ...), when known.
    object_value : str
        The task data key the object shows: ``"text"`` for ``<Text name="text" value="$text"/>``; empty
        when the object's ``value`` is not one plain ``$key`` (a literal, ``$pages[{{idx}}]``, several keys)
        or the object is unknown.
    problems : tuple of str
        What is wrong with this control's config; a control with problems is skipped.
    notes : tuple of str
        What was odd but harmless (a ``<Choice>`` listed twice is counted
        once: Label Studio's own document-retrieval template lists one twice).
    only : str
        DateTime's ``only`` attribute (``date``, ``time``, ``month``, ``year``), else empty.
    """

    name: str
    tag: str
    to_name: str = ""
    labels: tuple[str, ...] = ()
    multiple: bool = False
    max_rating: int = 5
    per_region: bool = False
    pattern: str = ""
    object_tag: str = ""
    object_value: str = ""
    problems: tuple[str, ...] = ()
    only: str = ""
    notes: tuple[str, ...] = ()

    @property
    def result_type(self) -> str:
        """The ``type`` of this control's results."""
        return CONTROL_TAGS[self.tag]

    @property
    def tag_name(self) -> str:
        """The tag as Label Studio spells it (``RectangleLabels``)."""
        return TAG_NAMES.get(self.tag, self.tag)

    @property
    def rating_categories(self) -> tuple[int, ...] | None:
        """Rating's categories 1..maxRating, or None (the values seen) when the scale is unknown or very large."""
        if 0 < self.max_rating <= MAX_RATING_CATEGORIES:
            return tuple(range(1, self.max_rating + 1))
        return None

    def matches(self, from_name: Any) -> bool:
        """Whether a result's ``from_name`` belongs to this control."""
        if from_name == self.name:
            return True
        return bool(self.pattern) and isinstance(from_name, str) and re.fullmatch(self.pattern, from_name) is not None

    def describe(self) -> str:
        """The control in a reason: ``RectangleLabels 'objects'``."""
        return f"{self.tag_name} {self.name!r}"


def _data_key(value: str) -> str:
    """The task data key of an object's ``value`` when it is one plain ``$key``, else ""."""
    match = _DATA_KEY.fullmatch(value.strip())
    return match.group(1) if match else ""


def _taxonomy_paths(element: ElementTree.Element, prefix: tuple[str, ...] = ()) -> list[str]:
    paths = []
    for child in element:
        if child.tag.lower() == "choice" and (child.get("alias") or child.get("value")) is not None:
            path = (*prefix, child.get("alias") or child.get("value", ""))
            paths.append(" / ".join(path))
            paths.extend(_taxonomy_paths(child, path))
    return paths


def _repeater_pattern(name: str, flags: list[str]) -> str:
    """A regular expression for a control name holding Repeater index flags, or "" when it holds none."""
    if not any(flag in name for flag in flags):
        return ""
    pattern = re.escape(name)
    for flag in flags:
        pattern = pattern.replace(re.escape(flag), r"\d+")
    return pattern


def _walk(element: ElementTree.Element, flags: list[str]) -> Iterable[tuple[ElementTree.Element, list[str]]]:
    """Every element with the Repeater index flags in force around it."""
    yield element, flags
    inner = flags
    if element.tag.lower() == "repeater":
        inner = [*flags, element.get("indexFlag") or "{{idx}}"]
    for child in element:
        yield from _walk(child, inner)


def _control(element: ElementTree.Element, tag: str, name: str, flags: list[str],
             objects: Mapping[str, tuple[str, str]]) -> Control:
    problems: list[str] = []
    if tag == "taxonomy":
        labels = tuple(_taxonomy_paths(element))
    elif tag == "ranker":
        labels = tuple(child.get("name", "") for child in element.iter()
                       if child.tag.lower() == "bucket" and child.get("name"))
    else:
        labels = tuple(child.get("alias") or child.get("value", "") for child in element.iter()
                       if child is not element and child.tag.lower() in ("choice", "label", "relation")
                       and (child.get("alias") or child.get("value")) is not None)
    notes = tuple(f"{'label' if tag != 'taxonomy' else 'path'} {label!r} listed twice; counted once"
                  for label in sorted({label for label in labels if labels.count(label) > 1}))
    labels = tuple(dict.fromkeys(labels))
    max_rating = 5
    if tag == "rating":
        try:
            max_rating = int(element.get("maxRating", "5"))
        except ValueError:
            problems.append(f"maxRating {element.get('maxRating')!r} is not a whole number")
        if max_rating < 1:
            problems.append(f"maxRating {max_rating} is below 1")
    multiple = False
    if tag == "choices":
        multiple = element.get("choice", "single").lower() == "multiple"
    elif tag == "taxonomy":
        multiple = element.get("maxUsages", "") != "1"
    to_name = element.get("toName", "")
    object_tag, object_value = objects.get(to_name.split(",")[0], ("", ""))
    return Control(
        name=name, tag=tag, to_name=to_name, labels=labels, multiple=multiple, max_rating=max(1, max_rating),
        per_region=tag in PER_REGION_TAGS and element.get("perRegion", "false").lower() == "true",
        pattern=_repeater_pattern(name, flags), object_tag=object_tag,
        object_value=object_value,
        problems=tuple(problems), only=(element.get("only") or "").lower() if tag == "datetime" else "",
        notes=notes,
    )


def parse_label_config(xml: str) -> dict[str, Control]:
    """Read the control tags of a Label Studio labeling config.

    Parameters
    ----------
    xml : str
        The project's ``label_config``.

    Returns
    -------
    dict of str to Control
        By control name, for every control tag of :data:`CONTROL_TAGS`. A
        control with a problem in its config is returned with
        :attr:`Control.problems` set, so that the mapping can skip it by name.
        Relations are scored when the config has a ``<Relations>`` tag (which
        may have no ``name``: the control is then called ``relations``).

    Raises
    ------
    InputError
        If the config is not well-formed XML.
    """
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        raise InputError(f"The labeling config is not well-formed XML: {error}.") from None
    objects = {element.get("name", ""): (element.tag.lower(), _data_key(element.get("value", "")))
               for element in root.iter()
               if element.get("name") and element.get("value") is not None and element.tag.lower() not in CONTROL_TAGS}
    controls: dict[str, Control] = {}
    for element, flags in _walk(root, []):
        tag = element.tag.lower()
        name = element.get("name") or ("relations" if tag == "relations" else None)
        if tag not in CONTROL_TAGS or not name:
            continue
        if tag == "chat" and not element.get("toName"):
            continue  # a Chat without toName only shows messages
        control = _control(element, tag, name, flags, objects)
        if name in controls:
            control = Control(name=name, tag=tag, to_name=control.to_name,
                              problems=(*control.problems, "two control tags share this name"))
        controls[name] = control
    return controls


def infer_controls(tasks: Iterable[Any]) -> dict[str, Control]:
    """Controls seen in the results of ``tasks``, for an export read without its labeling config.

    The result ``type`` gives the tag. A Choices control is taken as multiple when any result selects more than
    one choice, and its labels are every choice selected anywhere in the export, in the order first seen: the
    config's labels as far as the export shows them, so that each task of a multiple-choice control has one
    yes/no item per label, as with the config (a label nobody chose is not known). A Rating's scale is unknown
    (its categories are the ratings seen). Where the config could say otherwise, the control carries a note
    that starts with :data:`INFERRED`. A result that shares its region ``id``
    with a result of a region control, and has no geometry of its own, marks
    its control as per-region. A span control whose ``to_name`` is a key of
    every task's ``data`` holding text (a list of paragraphs for
    ParagraphLabels) labels that text, as Label Studio's templates name the
    object after its data key: the text's length is then its continuum's
    length for the span measures (:func:`plugin.mapping.span_units.continuum_length`).
    """
    seen: dict[str, dict[str, Any]] = {}
    for task in tasks:
        data = task.get("data") if isinstance(task, Mapping) else None
        data = data if isinstance(data, Mapping) else {}
        for entry in seen.values():  # controls seen before this task: does it hold their object's data too?
            entry["data"] = entry["data"] and _holds_object(entry["tag"], data.get(entry["to_name"]))
        annotations = task.get("annotations") if isinstance(task, Mapping) else None
        for annotation in annotations if isinstance(annotations, list) else []:
            results = annotation.get("result") if isinstance(annotation, Mapping) else None
            results = [r for r in results if isinstance(r, Mapping)] if isinstance(results, list) else []
            region_ids = {r.get("id") for r in results if tag_of_result_type(str(r.get("type", "")).lower())
                          not in (None, *PER_REGION_TAGS, "pairwise", "ranker")}
            for result in results:
                kind = str(result.get("type", "")).lower()
                name, tag = result.get("from_name"), tag_of_result_type(kind)
                if tag == "relations":
                    name = "relations"
                if not isinstance(name, str) or tag is None:
                    continue
                if name not in seen:
                    to_name = str(result.get("to_name", ""))
                    seen[name] = {"tag": tag, "to_name": to_name, "multiple": False, "per_region": False,
                                  "data": _holds_object(tag, data.get(to_name)), "labels": {}}
                entry = seen[name]
                value = result.get("value")
                if not isinstance(value, Mapping):
                    value = {}
                choices = value.get("choices")
                if tag == "choices" and isinstance(choices, list):
                    entry["labels"].update((choice, None) for choice in choices if isinstance(choice, str))
                    entry["multiple"] = entry["multiple"] or len(set(map(str, choices))) > 1
                if tag in PER_REGION_TAGS and result.get("id") is not None and result.get("id") in region_ids:
                    entry["per_region"] = True
    return {name: Control(name=name, tag=e["tag"], to_name=e["to_name"], labels=tuple(e["labels"]),
                          multiple=(e["multiple"] and e["tag"] == "choices") or e["tag"] == "taxonomy",
                          max_rating=0 if e["tag"] == "rating" else 5, per_region=e["per_region"],
                          object_tag=_SPAN_OBJECT[e["tag"]] if e["data"] else "",
                          object_value=e["to_name"] if e["data"] else "", notes=_inferred_notes(e))
            for name, e in seen.items()}


INFERRED = "inferred without the labeling config"
"""How an inferred control's note starts (:func:`infer_controls`)."""

PASS_CONFIG = ("The labeling config was inferred from the export's results: pass --label-config with the project's "
               "config (label_config in GET /api/projects/ID, or the project's Settings, Labeling Interface, Code) to "
               "score it as configured.")
"""What a summary or report says once when any control's note is :data:`INFERRED`."""


def was_inferred(remarks: Mapping[str, Mapping[str, Sequence[str]]]) -> bool:
    """Whether any control of a config summary (its ``notes`` per control) was inferred where the config could differ."""
    return any(note.startswith(INFERRED) for control in remarks.values() for note in control.get("notes", ()))


def _inferred_notes(entry: Mapping[str, Any]) -> tuple[str, ...]:
    """What :func:`infer_controls` had to guess of a control (nothing where the results show it all)."""
    if entry["tag"] == "choices" and entry["multiple"]:
        guess = (f"a label set over the {len(entry['labels'])} choices seen in the export (a choice nobody made is "
                 "no item)")
    elif entry["tag"] == "choices":
        guess = "a single choice, as no result selects two choices (a multiple-choice control scores otherwise)"
    elif entry["tag"] == "rating":
        guess = "a scale of the ratings seen (its maxRating is unknown; AC2's weights depend on it)"
    else:
        return ()
    return (f"{INFERRED}: {guess}",)


# The object a span control labels, when its data is text (a list of paragraphs for ParagraphLabels).
_SPAN_OBJECT = {"labels": "text", "hypertextlabels": "hypertext", "paragraphlabels": "paragraphs"}


def _holds_object(tag: str, value: Any) -> bool:
    """Whether a task's data ``value`` can be the object of a span control ``tag``.

    See :func:`infer_controls`.
    """
    if tag not in _SPAN_OBJECT:
        return False
    return isinstance(value, list) if tag == "paragraphlabels" else isinstance(value, str)
