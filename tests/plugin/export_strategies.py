"""Hypothesis strategies for Label Studio JSON exports and their labeling configs, degenerate shapes included.

:func:`exports` draws a :class:`FuzzExport`: a labeling config over a text and an image, with any subset of the tag
families the project maps (single and multiple Choices, Rating, Taxonomy, Number, TextArea, Labels spans on the
text, RectangleLabels, PolygonLabels and KeyPointLabels regions, Relations, and per-region Choices and TextArea),
and the tasks of a JSON export whose results are shaped as Label Studio stores them (``tests/data/``,
``tests/plugin/template_results.py``).

Each draw first picks a scenario, so that the shapes real projects reach come up often rather than by chance: zero
tasks, one task, tasks without annotations, one annotator, fifty annotators on a task, annotators known only by id
or only by email (or not at all), every annotation ground truth (marked by a reviewer, or imported), every
annotation cancelled or with an empty result, controls without a label left to fit, a label outside the config, a
label listed twice in the config, ratings outside their scale, spans reversed, empty or outside their text, numbers
and positions a float cannot hold or square (an integer of 400 digits, 1e300), relations and per-region answers to
regions that are gone, and results of controls the config lacks.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

__all__ = ["FAMILIES", "FuzzExport", "exports"]

# Each family of tags the fuzz reaches: its control's name in the config and in the results.
FAMILIES: dict[str, str] = {
    "choices": "sentiment",
    "multiple": "topics",
    "rating": "quality",
    "taxonomy": "taxonomy",
    "number": "score",
    "textarea": "summary",
    "labels": "ner",
    "rectangles": "boxes",
    "polygons": "poly",
    "keypoints": "kp",
    "relations": "relations",
    "region_choices": "region_choice",
    "region_text": "region_text",
}
REGION_FAMILIES = ("labels", "rectangles", "polygons", "keypoints")
# The labels results are drawn from: the config lists some of them, so some results carry a label outside it.
LABELS = ("A", "B", "C", "Z")
TAXONOMY = (("Animals",), ("Animals", "Cats"), ("Animals", "Dogs"), ("Plants",))
OUTSIDE_TAXONOMY = (("Rocks",), ("Animals", "Fish"))
TEXTS = ("", "Alice met Bob.", "Ünïcode 🙂 text", "x" * 30)
TIMES = ("2026-01-01T10:00:00Z", "2026-01-02T08:30:00.123456Z", "2026-01-02T08:30:00+02:00", "", "yesterday")
PLACES = (0.0, 10.0, 10.5, 40.0, 90.0)  # few positions: regions of several annotators meet often
SIZES = (0.0, 5.0, 20.0, 30.0, -10.0)
# Numbers JSON holds and a float does not, or barely: an integer of 400 digits (Python reads it exactly), 1e300.
HUGE = (10**400, -(10**400), 1e300)
SIZE = {"original_width": 200, "original_height": 100, "image_rotation": 0}


@dataclass(frozen=True)
class FuzzExport:
    """A drawn export.

    Attributes
    ----------
    config : str
        The labeling config's XML.
    tasks : list of dict
        The export: task objects as Label Studio writes them.
    families : tuple of str
        The families of :data:`FAMILIES` the config holds.
    scenario : dict
        The knobs the draw was made with (shown when an example fails).
    """

    config: str
    tasks: list[dict[str, Any]]
    families: tuple[str, ...]
    scenario: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """The export as the JSON text of its file."""
        return json.dumps(self.tasks)


def _label_list(labels: tuple[str, ...], element: str) -> str:
    return "".join(f'<{element} value="{label}"/>' for label in labels)


def _control_xml(family: str, labels: tuple[str, ...], max_rating: int, taxonomy: tuple[tuple[str, ...], ...]) -> str:
    name = FAMILIES[family]
    if family == "choices":
        return f'<Choices name="{name}" toName="text" choice="single">{_label_list(labels, "Choice")}</Choices>'
    if family == "multiple":
        return f'<Choices name="{name}" toName="text" choice="multiple">{_label_list(labels, "Choice")}</Choices>'
    if family == "rating":
        return f'<Rating name="{name}" toName="text" maxRating="{max_rating}"/>'
    if family == "taxonomy":
        roots: dict[str, list[str]] = {}
        for path in taxonomy:
            roots.setdefault(path[0], [])
            if len(path) > 1:
                roots[path[0]].append(path[1])
        inner = "".join(f'<Choice value="{root}">{_label_list(tuple(children), "Choice")}</Choice>'
                        for root, children in roots.items())
        return f'<Taxonomy name="{name}" toName="text">{inner}</Taxonomy>'
    if family == "number":
        return f'<Number name="{name}" toName="text" min="0" max="100"/>'
    if family == "textarea":
        return f'<TextArea name="{name}" toName="text"/>'
    if family == "labels":
        return f'<Labels name="{name}" toName="text">{_label_list(labels, "Label")}</Labels>'
    if family == "rectangles":
        return f'<RectangleLabels name="{name}" toName="image">{_label_list(labels, "Label")}</RectangleLabels>'
    if family == "polygons":
        return f'<PolygonLabels name="{name}" toName="image">{_label_list(labels, "Label")}</PolygonLabels>'
    if family == "keypoints":
        return f'<KeyPointLabels name="{name}" toName="image">{_label_list(labels, "Label")}</KeyPointLabels>'
    if family == "relations":
        return f"<Relations>{_label_list(labels, 'Relation')}</Relations>"
    if family == "region_choices":
        return (f'<Choices name="{name}" toName="image" perRegion="true">{_label_list(labels, "Choice")}'
                "</Choices>")
    return f'<TextArea name="{name}" toName="image" perRegion="true"/>'


@st.composite
def _config(draw: st.DrawFn) -> tuple[str, tuple[str, ...], dict[str, tuple[str, ...]], int]:
    """A labeling config: its XML, families, each family's labels (a label may be listed twice) and maxRating."""
    families = tuple(f for f in FAMILIES if draw(st.booleans()))
    # no labels at all (nothing to fit), the config's few, or one listed twice
    labels = {family: tuple(draw(st.lists(st.sampled_from(LABELS[:3]), max_size=4))) for family in families}
    max_rating = draw(st.integers(1, 10))
    taxonomy = tuple(draw(st.lists(st.sampled_from(TAXONOMY), max_size=4)))
    body = "".join(_control_xml(f, labels[f], max_rating, taxonomy) for f in families)
    xml = f'<View><Text name="text" value="$text"/><Image name="image" value="$image"/>{body}</View>'
    return xml, families, labels, max_rating


def _completed_by(draw: st.DrawFn, annotator: int, how: str) -> dict[str, Any]:
    """The ``completed_by`` field of an annotation (absent: an empty dict to merge)."""
    if how == "mixed":
        how = draw(st.sampled_from(["id", "object", "email", "missing"]))
    if how == "id":
        return {"completed_by": annotator}
    if how == "object":
        return {"completed_by": {"id": annotator, "email": f"a{annotator}@example.com", "first_name": "",
                                 "last_name": ""}}
    if how == "email":
        return {"completed_by": {"email": f"a{annotator}@example.com"}}
    return {}


@st.composite
def _span(draw: st.DrawFn, text: str) -> dict[str, Any]:
    """A span on ``text``: usually inside it, else reversed, empty or past its end."""
    n = len(text)
    shape = draw(st.sampled_from(["inside", "inside", "inside", "reversed", "empty", "outside", "negative", "huge"]))
    if shape == "inside" and n:
        start = draw(st.integers(0, n - 1))
        end = draw(st.integers(start + 1, n))
    elif shape == "reversed":
        end = draw(st.integers(0, max(n - 1, 0)))
        start = end + draw(st.integers(1, 3))
    elif shape == "empty":
        start = end = draw(st.integers(0, n))
    elif shape == "negative":
        start, end = -draw(st.integers(1, 3)), draw(st.integers(0, 2))
    elif shape == "huge":
        start, end = 0, draw(st.sampled_from(HUGE))
    else:
        start = draw(st.integers(0, n + 2))
        end = n + draw(st.integers(1, 5))
    return {"start": start, "end": end, "text": text[max(start, 0): max(int(min(end, n)), 0)]}


def _geometry(draw: st.DrawFn, family: str) -> dict[str, Any]:
    """A box, polygon or keypoint at one of a few places (now and then at one a float cannot hold)."""
    places = st.sampled_from(PLACES) if draw(st.integers(0, 9)) else st.sampled_from(HUGE)
    if family == "rectangles":
        return {"x": draw(places), "y": draw(st.sampled_from(PLACES)),
                "width": draw(st.sampled_from(SIZES)), "height": draw(st.sampled_from(SIZES)),
                "rotation": draw(st.sampled_from([0, 0, 30, 360]))}
    if family == "polygons":
        points = draw(st.lists(st.tuples(places, st.sampled_from(PLACES)), max_size=5))
        return {"points": [list(p) for p in points], "closed": True}
    return {"x": draw(places), "y": draw(st.sampled_from(PLACES)), "width": 1}


_RESULT_TYPE = {"labels": "labels", "rectangles": "rectanglelabels", "polygons": "polygonlabels",
                "keypoints": "keypointlabels"}


def _answer(draw: st.DrawFn, family: str, max_rating: int) -> dict[str, Any]:
    """The ``value`` of a task-level (or per-region) answer of ``family``."""
    if family in ("choices", "region_choices"):
        return {"choices": draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=1))}
    if family == "multiple":
        return {"choices": draw(st.lists(st.sampled_from(LABELS), max_size=4))}
    if family == "rating":
        rating = draw(st.one_of(st.integers(1, max_rating), st.integers(-1, max_rating + 3),
                                st.sampled_from([2.0, 2.5, *HUGE])))
        return {"rating": rating}
    if family == "taxonomy":
        paths = draw(st.lists(st.sampled_from(TAXONOMY + OUTSIDE_TAXONOMY), max_size=3))
        return {"taxonomy": [list(p) for p in paths]}
    if family == "number":
        return {"number": draw(st.one_of(st.sampled_from([0.0, 1.0, 70.0, -3.5, *HUGE]),
                                         st.integers(0, 5).map(float)))}
    return {"text": draw(st.lists(st.sampled_from(["yes", "Yes ", "no", "", "  "]), max_size=2))}


@st.composite
def _results(draw: st.DrawFn, families: tuple[str, ...], text: str, max_rating: int) -> list[dict[str, Any]]:
    """One annotation's (or prediction's) results: a few per family drawn, not only the config's."""
    chosen = [f for f in FAMILIES if (f in families and draw(st.integers(0, 3)) > 0)
              or (f not in families and draw(st.integers(0, 9)) == 0)]  # now and then a control the config lacks
    out: list[dict[str, Any]] = []
    regions: list[str] = []
    for family in chosen:
        name = FAMILIES[family]
        if family in REGION_FAMILIES:
            for _ in range(draw(st.integers(1, 2))):
                rid = f"r{len(regions)}"
                regions.append(rid)
                value = draw(_span(text)) if family == "labels" else _geometry(draw, family)
                kind = _RESULT_TYPE[family]
                value[kind] = draw(st.lists(st.sampled_from(LABELS), max_size=2))
                result = {"id": rid, "from_name": name, "to_name": "text" if family == "labels" else "image",
                          "type": kind, "value": value}
                out.append(result if family == "labels" else {**result, **SIZE})
        elif family in ("choices", "multiple", "rating", "taxonomy", "number", "textarea"):
            kind = "choices" if family == "multiple" else ("textarea" if family == "textarea" else family)
            out.append({"id": f"t-{family}", "from_name": name, "to_name": "text", "type": kind,
                        "value": _answer(draw, family, max_rating)})
    for family in chosen:
        name = FAMILIES[family]
        if family in ("region_choices", "region_text") and regions:
            for rid in draw(st.lists(st.sampled_from([*regions, "gone"]), min_size=1, max_size=2, unique=True)):
                out.append({"id": rid, "from_name": name, "to_name": "image",
                            "type": "choices" if family == "region_choices" else "textarea",
                            "value": _answer(draw, family, max_rating)})
        elif family == "relations" and regions:
            for _ in range(draw(st.integers(1, 2))):
                ends = draw(st.lists(st.sampled_from([*regions, "gone"]), min_size=2, max_size=2))
                out.append({"type": "relation", "from_id": ends[0], "to_id": ends[1],
                            "direction": draw(st.sampled_from(["right", "left", "bi"])),
                            "labels": draw(st.lists(st.sampled_from(LABELS), max_size=2))})
    return draw(st.permutations(out)) if len(out) > 1 else out


@st.composite
def exports(draw: st.DrawFn) -> FuzzExport:
    """A labeling config and a JSON export of tasks annotated for it; see the module notes."""
    config, families, _, max_rating = draw(_config())
    scenario = {
        "n_tasks": draw(st.sampled_from([0, 1, 1, 2, 3, 5])),
        "annotators": draw(st.sampled_from([1, 2, 3, 3, 4, 50])),
        "identity": draw(st.sampled_from(["id", "id", "object", "email", "mixed"])),
        "ground_truth": draw(st.sampled_from(["none", "none", "some", "all reviewed", "all imported"])),
        "emptiness": draw(st.sampled_from(["none", "none", "some", "all cancelled", "all empty"])),
        "predictions": draw(st.booleans()),
        "junk": draw(st.sampled_from([False, False, False, True])),
    }
    tasks: list[dict[str, Any]] = []
    annotation_id = 0
    for task in range(1, scenario["n_tasks"] + 1):
        text = draw(st.sampled_from(TEXTS))
        pool = scenario["annotators"]
        if pool == 50 and task > 1:  # fifty annotators on the first task only: a fuzz example stays fast
            pool = 3
        who = draw(st.lists(st.integers(1, pool), min_size=pool if pool == 50 else 0, max_size=min(pool, 4)
                            if pool != 50 else 50, unique=pool == 50))
        # fifty annotators give one of a few drawn answers each, as a crowd mostly agrees (and a draw stays small)
        crowd = [draw(_results(families, text, max_rating)) for _ in range(3)] if pool == 50 else []
        annotations = []
        for annotator in who:
            annotation_id += 1
            emptiness = scenario["emptiness"]
            cancelled = emptiness == "all cancelled" or (emptiness == "some" and draw(st.booleans()))
            empty = emptiness == "all empty" or (emptiness == "some" and draw(st.booleans()))
            truth = scenario["ground_truth"]
            ground_truth = truth.startswith("all") or (truth == "some" and draw(st.booleans()))
            imported = truth == "all imported" or (truth == "some" and ground_truth and draw(st.booleans()))
            annotation: dict[str, Any] = {
                "id": annotation_id, **_completed_by(draw, annotator, scenario["identity"]),
                "result": [] if empty or (cancelled and draw(st.booleans())) else (
                    copy.deepcopy(draw(st.sampled_from(crowd))) if crowd
                    else draw(_results(families, text, max_rating))),
                "was_cancelled": cancelled, "ground_truth": ground_truth,
                "created_at": draw(st.sampled_from(TIMES)), "updated_at": draw(st.sampled_from(TIMES)),
                "lead_time": draw(st.sampled_from([None, 0.0, 12.5])),
                "task": task, "project": 1,
            }
            if imported:
                annotation.update(import_id=annotation_id, updated_by=None)
            annotations.append(annotation)
        entry: dict[str, Any] = {"id": task, "data": {"text": text, "image": "/data/upload/1/cat.png"},
                                 "annotations": annotations, "meta": {}, "project": 1}
        if scenario["predictions"] and draw(st.booleans()):
            entry["predictions"] = [
                {"id": 1000 + 10 * task + k, "model_version": draw(st.sampled_from(["v1", "v2", "", None])),
                 "created_at": draw(st.sampled_from(TIMES)), "score": 0.5,
                 "result": draw(_results(families, text, max_rating))}
                for k in range(draw(st.integers(1, 2)))]
        tasks.append(entry)
    if scenario["junk"]:
        tasks = _with_junk(draw, tasks)
    return FuzzExport(config=config, tasks=tasks, families=families, scenario=scenario)


def _with_junk(draw: st.DrawFn, tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``tasks`` with what a hand-edited or concatenated export holds: an annotation that is not an object, a
    result that is not a list, a result item that is not an object, a task without an id, a task read twice."""
    for task in tasks:
        annotations = task["annotations"]
        if annotations and draw(st.booleans()):
            annotations.append("not an annotation")
        if annotations and draw(st.booleans()):
            broken = draw(st.sampled_from([a for a in annotations if isinstance(a, dict)]))
            broken["result"] = draw(st.sampled_from([None, "r1", {"choices": ["A"]}]))
        if annotations and draw(st.booleans()):
            holder = draw(st.sampled_from([a for a in annotations if isinstance(a, dict)]))
            if isinstance(holder["result"], list):
                holder["result"].append(draw(st.sampled_from(["junk", 7, None])))
    if draw(st.booleans()):
        tasks.append({"data": {"text": "no id"}, "annotations": []})
    identified = [task for task in tasks if "id" in task]
    if identified and draw(st.booleans()):  # two exports concatenated: a task's copy holding some of its annotations
        twice = draw(st.sampled_from(identified))
        tasks.append({**copy.deepcopy(twice), "annotations": copy.deepcopy(twice["annotations"][:1])})
    return tasks
