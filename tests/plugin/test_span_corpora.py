"""Span corpora from outside this project, read as Label Studio exports (tests/data/spans, sources in SOURCE.md).

Each export goes through what ``sync --export`` uses: the export reader,
the labeling config beside it, the submissions and the mapping. The counts
asserted are worked out from the files themselves (the results each
annotator gave), so the mapping is checked against the data, not against
its own output.
"""

import json
from collections import Counter

import pytest

from plugin.annotations import Skips, collect_submissions
from plugin.labelconfig import parse_label_config
from plugin.labelstudio import read_export
from plugin.mapping import map_project
from plugin.settings import MappingOptions
from tests.plugin.conftest import DATA

SPANS = DATA / "spans"
SPAN_TYPES = {"labels", "paragraphlabels", "hypertextlabels", "timeserieslabels"}


def _load(name, config, **options):
    tasks = read_export(SPANS / f"{name}.json")
    controls = parse_label_config((SPANS / config).read_text())
    skips = Skips()
    submissions = collect_submissions(tasks, skips)
    mapped = map_project(controls, submissions, skips, MappingOptions(**options))
    return tasks, submissions, mapped, skips


def _counted(tasks):
    """The annotations that count: not skipped."""
    return [(task, a) for task in tasks for a in task["annotations"] if not a.get("was_cancelled")]


def _span_results(tasks, control):
    return [(task["id"], a["completed_by"], r) for task, a in _counted(tasks) for r in a["result"]
            if r["from_name"] == control and r["type"] in SPAN_TYPES]


def _position(value):
    if isinstance(value.get("start"), str):
        return value["start"], value["startOffset"], value["end"], value["endOffset"]
    return value["start"], value["end"]


def _items(mapped):
    """``{(task, item): {annotator: label}}``, failing if one annotator gives an item two labels."""
    out = {}
    for task, item, annotator, label in mapped.records:
        labels = out.setdefault((task, item), {})
        assert annotator not in labels, (item, annotator)
        labels[annotator] = label
    return out


def _marked(mapped, absent):
    """How many (item, annotator) records carry a region rather than the "no region" label."""
    return sum(1 for *_, label in mapped.records if label != absent)


def test_krippendorff_2004_example():
    # Krippendorff (2004, p. 254) as DKPro Agreement transcribes it: observer i marks 4 units, j 5; both k units
    # coincide, c [75, 145) of i and c [70, 150) of j differ by 5 characters at each end.
    tasks, submissions, mapped, skips = _load("krippendorff2004", "krippendorff2004_config.xml")
    assert len(tasks[0]["data"]["text"]) == 300
    assert not skips.as_dict()
    assert sorted(s.annotator for s in submissions[1]) == ["1", "2"]
    label = mapped["label"]
    results = _span_results(tasks, "label")
    assert Counter(who for _, who, _ in results) == {1: 4, 2: 5}
    # Exact: one item per distinct position (7), each annotator present in each.
    items = _items(label)
    assert len(items) == len({_position(r["value"]) for *_, r in results}) == 7
    assert _marked(label, "no span") == 9
    assert items[(1, "1:30-90")] == {"1": "k", "2": "k"} and items[(1, "1:150-200")] == {"1": "k", "2": "k"}
    assert items[(1, "1:75-145")] == {"1": "c", "2": "no span"}
    # Overlap (Jaccard >= 0.5): c [75, 145) and [70, 150) overlap 70 of 80 and form one item; the other c units
    # overlap less than half (c [220, 250) and [205, 225): 5 of 45) and stay apart.
    overlap = _items(_load("krippendorff2004", "krippendorff2004_config.xml", span_alignment="overlap")[2]["label"])
    assert len(overlap) == 6
    assert {"1": "c", "2": "c"} in overlap.values()


def test_leoka_police_reports_ner_project():
    tasks, submissions, mapped, skips = _load("leoka_team_2", "leoka_config.xml")
    assert len(tasks) == 130
    # 390 annotations, three on every task; two are skipped (cancelled) and counted as such.
    assert Counter(len(t["annotations"]) for t in tasks) == {3: 130}
    assert skips.as_dict() == {"skipped (cancelled) annotation": 2}
    assert sum(len(s) for s in submissions.values()) == 388
    annotators = {str(a["completed_by"]) for _, a in _counted(tasks)}
    assert annotators == {"19149", "19160", "19164"}
    label = mapped["label"]
    assert {annotator for _, _, annotator, _ in label.records} == annotators
    results = _span_results(tasks, "label")
    assert len(results) == 3260 and all(len(r["value"]["labels"]) == 1 for *_, r in results)
    # Every span result of a counted annotation is one region: nothing skipped, no duplicates.
    assert _marked(label, "no span") == 3260
    # Exact alignment: an item per distinct (task, start, end); every annotator of the task gives it a label.
    items = _items(label)
    positions = {(task, *_position(r["value"])) for task, _, r in results}
    assert len(items) == len(positions) == 1764
    submitted = {task: {s.annotator for s in subs} for task, subs in submissions.items()}
    assert all(set(labels) == submitted[task] for (task, _), labels in items.items())
    in_file = Counter(r["value"]["labels"][0] for *_, r in results)
    assert in_file == {"Experience": 466, "Person": 464, "Age": 450, "Department": 391, "Date": 381, "Time": 370,
                       "Firearm": 369, "Drugs": 260, "Other_weapon": 65, "SWAT": 44}
    assert Counter(label for *_, label in label.records if label != "no span") == in_file
    # The per-task Taxonomy is read too: one item per (task, path) anyone chose.
    assert len(_items(mapped["Category"])) == 783
    # Overlap alignment (Jaccard >= 0.5) as grouped by plugin.mapping.regions today (complete linkage, most
    # similar pairs first): 1,361 items hold the same 3,260 regions. A different matching may change the count.
    overlap = _load("leoka_team_2", "leoka_config.xml", span_alignment="overlap")[2]["label"]
    assert _marked(overlap, "no span") == 3260
    assert len(_items(overlap)) == 1361


@pytest.mark.parametrize("name, control, tag, regions, exact, overlap", [
    # Beat (12.78-28.51 s) and Beat 0.5 s later match (Jaccard 0.94); Other and Voice at one place match.
    ("lsf_audio", "label", "labels", {1: 2, 2: 2}, 2, 2),
    # Phrases 2-4 (both annotators, two labels) and phrase 1 (annotator 2 only): XPath ranges match exactly only.
    ("lsf_paragraphs", "ner", "paragraphlabels", {1: 1, 2: 2}, 2, 2),
    # Four regions each; "The Wolf" [180, 188) and "Wolf" [184, 188) are two items exactly, one with overlap 0.5.
    ("lsf_hypertext", "ner", "hypertextlabels", {1: 4, 2: 4}, 5, 4),
    # Run 4-23 and 6-25 match (Jaccard 17/21), Walk matches; the instant at 40 (annotator 2) matches nothing.
    ("lsf_timeseries", "label", "timeserieslabels", {1: 2, 2: 3}, 3, 3),
])
def test_label_studio_span_examples(name, control, tag, regions, exact, overlap):
    tasks, submissions, mapped, skips = _load(name, f"{name}_config.xml")
    assert len(tasks) == 1 and sorted(s.annotator for s in submissions[1]) == ["1", "2"]
    # Regions that cannot be units for the span measures are counted, and still are items (below).
    assert all("left out of F1, unitizing alpha and gamma" in text for text in skips.as_dict())
    results = _span_results(tasks, control)
    assert {r["type"] for *_, r in results} == {tag}
    assert Counter(who for _, who, _ in results) == regions
    records = mapped[control].records
    assert sum(1 for *_, label in records if not label.startswith("no ")) == sum(regions.values())
    assert len(_items(mapped[control])) == exact
    assert len(_items(_load(name, f"{name}_config.xml", span_alignment="overlap")[2][control])) == overlap


def test_hypertext_example_keeps_its_global_offsets():
    tasks = read_export(SPANS / "lsf_hypertext.json")
    offsets = sorted((r["value"]["globalOffsets"]["start"], r["value"]["globalOffsets"]["end"])
                     for *_, r in _span_results(tasks, "ner"))
    assert offsets == [(0, 5), (0, 5), (69, 104), (69, 104), (81, 105), (81, 105), (180, 188), (184, 188)]


def test_timeseries_example_instant_is_an_item_of_its_own():
    tasks, _, mapped, _ = _load("lsf_timeseries", "lsf_timeseries_config.xml")
    instant = [r for *_, r in _span_results(tasks, "label") if r["value"].get("instant")]
    assert [(r["value"]["start"], r["value"]["end"]) for r in instant] == [(40, 40)]
    lone = [labels for labels in _items(mapped["label"]).values() if "no region" in labels.values()]
    assert lone == [{"1": "no region", "2": "Run"}]


def test_exports_are_json_lists_of_tasks_with_annotations():
    for path in sorted(SPANS.glob("*.json")):
        tasks = json.loads(path.read_text())
        assert isinstance(tasks, list) and all("annotations" in t and "data" in t for t in tasks), path.name
        assert "email" not in path.read_text(), path.name
