"""The labeling config: which control tags a project has, their types and their labels."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

__all__ = ["CONTROL_TAGS", "Control", "infer_controls", "parse_label_config"]

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
    "rectanglelabels": "rectanglelabels",
    "pairwise": "pairwise",
}


@dataclass(frozen=True)
class Control:
    """One control tag of the labeling config.

    Attributes
    ----------
    name : str
        Its ``name``: the ``from_name`` of its results.
    tag : str
        The tag, lower case (``choices``, ``labels``, ``rating``, ...).
    to_name : str
        The object tag it labels.
    labels : tuple of str
        Its ``<Choice>`` / ``<Label>`` values in config order (taxonomy: every
        path, joined with " / "); empty for tags without a fixed set.
    multiple : bool
        ``choice="multiple"`` on Choices.
    max_rating : int
        Rating's ``maxRating`` (5 by default).
    """

    name: str
    tag: str
    to_name: str = ""
    labels: tuple[str, ...] = ()
    multiple: bool = False
    max_rating: int = 5

    @property
    def result_type(self) -> str:
        """The ``type`` of this control's results."""
        return CONTROL_TAGS[self.tag]


def _taxonomy_paths(element: ElementTree.Element, prefix: tuple[str, ...] = ()) -> list[str]:
    paths = []
    for child in element:
        if child.tag.lower() == "choice" and child.get("value") is not None:
            path = (*prefix, child.get("value", ""))
            paths.append(" / ".join(path))
            paths.extend(_taxonomy_paths(child, path))
    return paths


def parse_label_config(xml: str) -> dict[str, Control]:
    """Read the control tags of a Label Studio labeling config.

    Parameters
    ----------
    xml : str
        The project's ``label_config``.

    Returns
    -------
    dict of str to Control
        By control name, for the tags this project scores (see
        :data:`CONTROL_TAGS`); other tags are left out.

    Raises
    ------
    ValueError
        If the config is not well-formed XML.
    """
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        raise ValueError(f"The labeling config is not well-formed XML: {error}.") from None
    controls: dict[str, Control] = {}
    for element in root.iter():
        tag = element.tag.lower()
        name = element.get("name")
        if tag not in CONTROL_TAGS or not name:
            continue
        if tag == "taxonomy":
            labels = tuple(_taxonomy_paths(element))
        else:
            labels = tuple(child.get("value", "") for child in element
                           if child.tag.lower() in ("choice", "label") and child.get("value") is not None)
        try:
            max_rating = int(element.get("maxRating", "5"))
        except ValueError:
            max_rating = 5
        controls[name] = Control(
            name=name,
            tag=tag,
            to_name=element.get("toName", ""),
            labels=labels,
            multiple=tag == "choices" and element.get("choice", "single").lower() == "multiple",
            max_rating=max(1, max_rating),
        )
    return controls


def infer_controls(tasks: Iterable[Any]) -> dict[str, Control]:
    """Controls seen in the results of ``tasks``, for an export read without its labeling config.

    The result ``type`` gives the tag; a Choices control is taken as multiple
    when any result selects more than one choice. Without the config no label
    can be checked against it, and a Rating's scale is the largest rating seen.
    """
    seen: dict[str, dict[str, Any]] = {}
    tag_of = {kind: tag for tag, kind in CONTROL_TAGS.items()}
    for task in tasks:
        annotations = task.get("annotations") if isinstance(task, Mapping) else None
        for annotation in annotations if isinstance(annotations, list) else []:
            results = annotation.get("result") if isinstance(annotation, Mapping) else None
            for result in results if isinstance(results, list) else []:
                if not isinstance(result, Mapping):
                    continue
                name, kind = result.get("from_name"), str(result.get("type", "")).lower()
                if not isinstance(name, str) or kind not in tag_of:
                    continue
                entry = seen.setdefault(name, {"tag": tag_of[kind], "to_name": str(result.get("to_name", "")),
                                               "multiple": False, "max_rating": 1})
                value = result.get("value")
                if not isinstance(value, Mapping):
                    value = {}
                if isinstance(value.get("choices"), list) and len(value["choices"]) > 1:
                    entry["multiple"] = True
                rating = value.get("rating")
                if isinstance(rating, int) and not isinstance(rating, bool):
                    entry["max_rating"] = max(entry["max_rating"], rating)
    return {name: Control(name=name, tag=e["tag"], to_name=e["to_name"], multiple=e["multiple"] and e["tag"] == "choices",
                          max_rating=e["max_rating"] if e["tag"] == "rating" else 5)
            for name, e in seen.items()}
