"""Span corpora from outside this project, read as Label Studio exports (tests/data/spans, sources in SOURCE.md).

Each export goes through what ``sync --export`` uses: the export reader,
the labeling config beside it, the submissions and the mapping. The counts
asserted are worked out from the files themselves (the results each
annotator gave), so the mapping is checked against the data, not against
its own output.
"""

import json
import sys
from collections import Counter

import pytest

from agreement.alignment import match_overlapping
from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, collect_submissions
from plugin.mapping.labelconfig import parse_label_config
from plugin.mapping.span_units import continuum_length, span_units
from plugin.settings import MappingOptions
from tests.exports import read_export
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
    # Overlap alignment (Jaccard >= 0.5): the grouping of greatest total overlap, worked out task by task from the
    # file's spans by agreement.alignment.match_overlapping (all pairs, one set partition per task): 1,361 items
    # hold the same 3,260 regions.
    overlap = _load("leoka_team_2", "leoka_config.xml", span_alignment="overlap")[2]["label"]
    assert _marked(overlap, "no span") == 3260
    by_task = {}
    for task, who, r in results:
        by_task.setdefault(task, []).append((who, r["value"]["start"], r["value"]["end"]))
    optimum = 0
    for spans in by_task.values():
        who, start, end = zip(*spans)
        optimum += len(set(match_overlapping(who, start, end, jaccard=0.5).tolist()))
    assert len(_items(overlap)) == optimum == 1361


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


# Span rows for the span measures (plugin.mapping.span_units): what the files hold, unit by unit.

def _continua(tasks, mapped):
    """``{(task, scope): length}`` from continuum_length, for every continuum the rows name."""
    by_id = {task["id"]: task for task in tasks}
    out = {}
    for task, scope, *_ in mapped.spans:
        data = by_id[task]
        results = [r for a in data["annotations"] for r in a["result"]]
        out[(task, scope)] = continuum_length(mapped.control, data["data"], results, scope=scope)
    return out


def test_krippendorff_2004_example_gives_its_nine_units_on_a_continuum_of_300():
    tasks, _, mapped, skips = _load("krippendorff2004", "krippendorff2004_config.xml")
    label = mapped["label"]
    # Krippendorff (2004, p. 254) as DKPro Agreement's Krippendorff2004Test transcribes it (begin, length), on the
    # book's continuum [150, 450): observer i (annotator 1) c 225+70, c 370+30, k 180+60, k 300+50; observer j
    # (annotator 2) c 220+80, c 355+20, c 400+20, k 180+60, k 300+50. The task's text is the continuum less 150.
    book = {("1", "c", 225, 70), ("1", "c", 370, 30), ("1", "k", 180, 60), ("1", "k", 300, 50),
            ("2", "c", 220, 80), ("2", "c", 355, 20), ("2", "c", 400, 20), ("2", "k", 180, 60), ("2", "k", 300, 50)}
    assert len(label.spans) == 9
    assert {(a, lab, start + 150, end - start) for _, _, a, lab, start, end in label.spans} == book
    assert all(task == 1 and scope == () for task, scope, *_ in label.spans)
    assert label.submitted == ((1, "1"), (1, "2"))
    assert _continua(tasks, label) == {(1, ()): 300.0}
    units = span_units(label, lengths=_continua(tasks, label))
    assert units.n_units == 9 and units.lengths.tolist() == [300.0] and units.labels == ("c", "k")
    assert sorted(zip(units.start.tolist(), units.end.tolist(), strict=True))[:2] == [(30.0, 90.0), (30.0, 90.0)]
    assert units.present.tolist() == [[True, True]]
    assert not skips.as_dict()


def test_leoka_gives_its_3260_spans_as_the_file_holds_them():
    tasks, _, mapped, _ = _load("leoka_team_2", "leoka_config.xml")
    label = mapped["label"]
    in_file = Counter((task, str(who), r["value"]["labels"][0], float(r["value"]["start"]), float(r["value"]["end"]))
                      for task, who, r in _span_results(tasks, "label"))
    rows = Counter((task, annotator, lab, start, end) for task, scope, annotator, lab, start, end in label.spans)
    assert len(label.spans) == 3260 and rows == in_file
    assert {scope for _, scope, *_ in label.spans} == {()}
    # The first task's first span and the last span, with the text they cover.
    by_id = {task["id"]: task["data"]["text"] for task in tasks}
    first, last = label.spans[0], label.spans[-1]
    assert first == (97056480, (), "19149", "Experience", 1083.0, 1120.0)
    assert by_id[first[0]][1083:1120] == "4 years of law enforcement experience"
    assert last == (97056609, (), "19164", "Date", 64.0, 75.0) and by_id[last[0]][64:75] == "September 1"
    # Present: the 388 submitted annotations, one per (task, annotator); every task is a continuum of its text.
    assert len(label.submitted) == len(set(label.submitted)) == 388
    lengths = _continua(tasks, label)
    assert len(lengths) == 130 and all(lengths[(task, ())] == len(by_id[task]) for task, _ in lengths)
    units = span_units(label, lengths=lengths)
    assert units.n_units == 3260 and units.present.sum() == 388


def test_label_studio_span_examples_as_units():
    tasks, _, mapped, skips = _load("lsf_audio", "lsf_audio_config.xml")
    # Seconds as stored; the example's results carry no original_length, so the length is the caller's (None).
    assert sorted(mapped["label"].spans) == [
        (1, (), "1", "Beat", 12.778410892095105, 28.50568583621215),
        (1, (), "1", "Other", 55.747572792986325, 59.39854733358493),
        (1, (), "2", "Beat", 13.278410892095105, 29.00568583621215),
        (1, (), "2", "Voice", 55.747572792986325, 59.39854733358493)]
    assert _continua(tasks, mapped["label"]) == {(1, ()): None} and not skips.as_dict()

    tasks, _, mapped, skips = _load("lsf_paragraphs", "lsf_paragraphs_config.xml")
    # Phrases 2 to 4 (both annotators) cross paragraphs and are left out; phrase 1 "Hate what?" is [0, 10).
    assert mapped["ner"].spans == ((1, ("paragraph=1",), "2", "Random talk", 0.0, 10.0),)
    assert _continua(tasks, mapped["ner"]) == {(1, ("paragraph=1",)): 10.0}
    assert skips.as_dict() == {"span across paragraphs (each paragraph is a continuum of its own; left out of F1, "
                               "unitizing alpha and gamma): ParagraphLabels 'ner'": 2}

    tasks, _, mapped, skips = _load("lsf_hypertext", "lsf_hypertext_config.xml")
    spans = mapped["ner"].spans
    assert sorted((a, lab, s, e) for _, _, a, lab, s, e in spans) == [
        ("1", "Date", 69.0, 104.0), ("1", "Date", 81.0, 105.0), ("1", "Person", 0.0, 5.0), ("1", "Person", 180.0, 188.0),
        ("2", "Date", 69.0, 104.0), ("2", "Person", 0.0, 5.0), ("2", "Person", 81.0, 105.0), ("2", "Person", 184.0, 188.0)]
    # The globalOffsets count the HTML's text content: 389 characters, "The Wolf" at [180, 188).
    assert _continua(tasks, mapped["ner"]) == {(1, ()): 389.0} and not skips.as_dict()

    tasks, _, mapped, skips = _load("lsf_timeseries", "lsf_timeseries_config.xml")
    assert sorted(mapped["label"].spans) == [(1, (), "1", "Run", 4.0, 23.0), (1, (), "1", "Walk", 52.0, 69.0),
                                             (1, (), "2", "Run", 6.0, 25.0), (1, (), "2", "Walk", 52.0, 69.0)]
    assert _continua(tasks, mapped["label"]) == {(1, ()): None}
    # Its length unknown, the series is the units' extent, 4 to 69, moved to begin at 0.
    units = span_units(mapped["label"])
    assert units.lengths.tolist() == [65.0] and units.start.min() == 0.0
    assert skips.as_dict() == {"instant (start equals end: no extent for span measures; left out of F1, unitizing "
                               "alpha and gamma): TimeSeriesLabels 'label'": 1}


def test_span_rows_cost_about_150_bytes_a_span():
    # LEOKA's 3,260 spans: tracemalloc counts 1.40 MB retained by map_project with the rows, 0.91 MB without
    # (152 bytes a span). Counted here exactly: each row is a 6-tuple (88 bytes), two floats of its own (48), and
    # its slot in the tuple of rows (8); the scope, the task id, the annotator and the label are shared objects.
    _, _, mapped, _ = _load("leoka_team_2", "leoka_config.xml")
    spans = mapped["label"].spans
    assert len({id(row[2]) for row in spans}) == 3 and len({id(row[3]) for row in spans}) == 10
    assert len({id(row[1]) for row in spans}) == 1 and len({id(row[0]) for row in spans}) == 130
    own = sys.getsizeof(spans) + sum(sys.getsizeof(row) + sys.getsizeof(row[4]) + sys.getsizeof(row[5])
                                     for row in spans)
    assert own / len(spans) < 150


def test_krippendorff_2004_export_scored_through_the_mapping():
    # The export read as sync reads it, its units built by the mapping, scored by agreement.unitizing: the values
    # tests/agreement/test_unitizing.py checks on the units typed in from the book (Krippendorff 2004, p. 254:
    # c 0.7286 with D_o 0.0144 and D_e 0.0532, k 1.0; overall 0.858665 from the data, 0.8591 printed from rounded
    # values), and the 2016 u-alpha 0.5909 that krippendorff-unitized-alpha and quallmer give.
    from agreement.unitizing import u_alpha, unitizing_alpha
    tasks, _, mapped, _ = _load("krippendorff2004", "krippendorff2004_config.xml")
    units = span_units(mapped["label"], lengths=_continua(tasks, mapped["label"]))
    result = unitizing_alpha(units)
    c, k = result.per_label.loc["c"], result.per_label.loc["k"]
    assert (round(c["value"], 4), round(c["observed"], 4), round(c["expected"], 4)) == (0.7286, 0.0144, 0.0532)
    assert k["value"] == 1.0
    assert result.value == pytest.approx(0.858665, abs=1e-6)
    assert round(u_alpha(units).value, 4) == 0.5909
