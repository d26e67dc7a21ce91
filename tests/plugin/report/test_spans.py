"""The report's span section: per-label F1, the span measures side by side, the boundary offsets, the tasks' F1.

The numbers the section shows come from the project scores (``ControlScore.spans``);
these tests recompute them from the span measures in agreement/ on the
mapping's units and compare, and hold the offsets to a brute-force matching.
"""

import itertools
import json
import math
import warnings
from collections import Counter
from html import escape

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement import UndefinedMeasureWarning
from agreement.span_f1 import span_f1
from agreement.unitizing import u_alpha, unitizing_alpha
from plugin.mapping.labelconfig import parse_label_config
from plugin.mapping.span_units import span_units
from plugin.report import build_report, report_json, write_report
from plugin.report.charts import offset_chart
from plugin.report.page import render_html
from plugin.report.tables import SPAN_MEASURES, span_offsets
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.exports import export_project, read_export
from tests.plugin.conftest import DATA
from tests.profiles import examples

SPANS = DATA / "spans"
CONFIG = """<View>
  <Labels name="ner" toName="text"><Label value="PER"/><Label value="LOC"/></Labels>
  <Text name="text" value="$text"/>
</View>"""
TEXT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _task(task, marks, *, name="ner", text=TEXT):
    """A task as Label Studio exports it: ``marks`` = {annotator id: [(start, end, label), ...]}."""
    annotations = [{"id": task * 100 + who, "completed_by": who, "was_cancelled": False, "ground_truth": False,
                    "created_at": f"2026-01-0{who}T00:00:00Z",
                    "result": [{"id": f"r{task}-{who}-{i}", "from_name": control, "to_name": "text", "type": "labels",
                                "value": {"start": s, "end": e, "text": text[s:e], "labels": [label]}}
                               for i, (s, e, label, control) in enumerate(
                                   (m if len(m) == 4 else (*m, name)) for m in spans)]}
                   for who, spans in marks.items()]
    return {"id": task, "data": {"text": text}, "annotations": annotations, "meta": {}}


def _report(tasks, controls, **scoring):
    state = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions(**scoring))
    return state, build_report(state.snapshot(), source="test", generated_at="now")


@pytest.fixture(scope="module")
def bratiaa():
    tasks, controls = export_project(DATA / "bratiaa" / "export.json")
    state, report = _report(tasks, controls)
    return state, report, json.loads((DATA / "bratiaa_reference.json").read_text())


def _units(state, name):
    mapped = state.snapshot().mapped[name]
    return span_units(mapped, lengths=mapped.lengths)


def test_per_label_f1_is_the_measures_of_agreement_and_bratiaa(bratiaa):
    state, report, reference = bratiaa
    table = report.span_labels.set_index("label")
    units = _units(state, "label")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        exact, overlap = span_f1(units, match="exact"), span_f1(units, match="overlap", jaccard=0.5)
        unitizing = unitizing_alpha(units)
    for result, key in ((exact, "f1_exact"), (overlap, "f1_overlap")):
        per_label = result.per_label()
        for label, row in per_label.iterrows():
            assert table.loc[label, key] == pytest.approx(row["mean"], abs=1e-6)
            assert table.loc[label, f"{key}_sd"] == pytest.approx(row["sd"], abs=1e-6)
            assert table.loc[label, f"{key}_pairs"] == row["pairs"] == 6
        assert (table.loc["(all labels)", key], table.loc["(all labels)", f"{key}_sd"]) == pytest.approx(
            result.total(), abs=1e-6)
    for label, row in unitizing.per_label.iterrows():
        assert table.loc[label, "unitizing_alpha"] == pytest.approx(row["value"], abs=1e-6)
    # bratiaa 0.1.4 on its example project (tests/data/bratiaa/SOURCE.md, tests/data/bratiaa_reference.py):
    # LOC 0.819, MISC 0.840, ORG 0.906, PER 0.938, mean and population SD over the 6 annotator pairs.
    for label, value in reference["per_label"].items():
        assert (table.loc[label, "f1_exact"], table.loc[label, "f1_exact_sd"]) == pytest.approx(
            (value["mean"], value["sd"]), abs=1e-6)
    # every span the mapping kept is counted under its label
    assert table.loc[["LOC", "MISC", "ORG", "PER"], "n_spans"].sum() == table.loc["(all labels)", "n_spans"] \
        == units.n_units
    pairs = report.span_pairs
    assert len(pairs) == 6 and pairs["tp_overlap"].sum() == len(report.span_offsets)
    assert set(pairs["f1_exact"].round(6)) == set(exact.pair_table()["f1"].round(6))


def test_the_measures_side_by_side_are_the_control_scores(bratiaa):
    state, report, _ = bratiaa
    score = state.scores().controls["label"]
    spans = score.spans
    measures = report.span_measures.set_index("measure")
    assert list(measures.index) == [key for key, _, _ in SPAN_MEASURES]
    assert all(isinstance(text, str) and text.endswith((".", "?")) for text in measures["answers"])
    units = _units(state, "label")
    family = u_alpha(units)
    assert measures.loc["u_alpha", "value"] == pytest.approx(family.value, abs=1e-6)
    assert measures.loc["binary_u_alpha", "value"] == pytest.approx(family.binary, abs=1e-6)
    assert measures.loc["coding_u_alpha", "value"] == pytest.approx(family.coding, abs=1e-6)
    gamma = spans["gamma"]
    assert [measures.loc["gamma", k] for k in ("value", "low", "high", "observed", "expected")] == \
        [gamma[k] for k in ("value", "low", "high", "observed", "expected")]
    assert measures.loc["gamma", "low"] <= measures.loc["gamma", "value"] <= measures.loc["gamma", "high"]
    assert (measures.loc["spa", "value"], measures.loc["spa", "low"], measures.loc["spa", "high"]) == \
        (score.spa, *score.spa_ci)
    assert measures.loc["alpha", "value"] == score.alpha
    assert measures.loc["f1_exact", "n_pairs"] == 6 and math.isnan(measures.loc["f1_exact", "low"])
    assert "Jaccard >= 0.5" in measures.loc["f1_overlap", "name"]


# Krippendorff (2004), Content Analysis, 2nd ed., p. 254: unitizing alpha 0.8591 (c 0.7286 with D_o 0.0144 and
# D_e 0.0532; k 1.0); the 2016 u-alpha of the same example is 0.5909 (PyPI krippendorff-unitized-alpha, quallmer).
def test_krippendorff_2004_in_the_section():
    tasks = read_export(SPANS / "krippendorff2004.json")
    _, report = _report(tasks, parse_label_config((SPANS / "krippendorff2004_config.xml").read_text()))
    measures = report.span_measures.set_index("measure")
    assert measures.loc["unitizing_alpha", "value"] == pytest.approx(0.8591, abs=5e-4)
    assert measures.loc["u_alpha", "value"] == pytest.approx(0.5909, abs=5e-5)
    assert set(measures["lengths"]) == {"text"} and set(measures["n_continua"]) == {1}
    labels = report.span_labels.set_index("label")
    assert labels.loc["c", "unitizing_alpha"] == pytest.approx(0.7286, abs=5e-5)
    assert labels.loc["c", "unitizing_observed"] == pytest.approx(0.0144, abs=5e-5)
    assert labels.loc["c", "unitizing_expected"] == pytest.approx(0.0532, abs=5e-5)
    assert labels.loc["k", "unitizing_alpha"] == 1.0
    # The c units of the two observers lie 5 to 15 characters apart at their boundaries; the k units agree.
    offsets = report.span_offsets
    c = offsets[offsets["label"] == "c"]
    assert len(c) >= 1 and ((c["start_offset"] != 0) | (c["end_offset"] != 0)).all()
    assert c[["start_offset", "end_offset"]].abs().max().max() <= 15
    assert (offsets.loc[offsets["label"] == "k", ["start_offset", "end_offset"]] == 0).all().all()
    assert set(offsets["unit"]) == {"characters"}
    page = render_html(report)
    assert 'id="spans"' in page and page.count("<svg") >= 2
    assert "9 spans on 1 continua" in page and "each task&#x27;s text" in page


def _brute_force_offsets(tasks, jaccard=0.5):
    """Every one-to-one matching of each (task, pair, label) enumerated: the one with the most matches, then the
    largest total Jaccard; the offsets of its pairs."""
    found = Counter()
    for task in tasks:
        spans = {str(a["completed_by"]): [(r["value"]["start"], r["value"]["end"], r["value"]["labels"][0])
                                          for r in a["result"]] for a in task["annotations"]}
        for first, second in itertools.combinations(sorted(spans), 2):
            for label in {s[2] for s in spans[first] + spans[second]}:
                a = [s for s in spans[first] if s[2] == label]
                b = [s for s in spans[second] if s[2] == label]

                def jac(x, y):
                    inter = max(0, min(x[1], y[1]) - max(x[0], y[0]))
                    return inter / ((x[1] - x[0]) + (y[1] - y[0]) - inter)

                best, chosen = (-1, -1.0), []
                for assignment in itertools.permutations(list(range(len(b))) + [None] * len(a), len(a)):
                    pairs = [(x, b[j]) for x, j in zip(a, assignment, strict=True) if j is not None]
                    if any(jac(x, y) < jaccard for x, y in pairs):
                        continue
                    value = (len(pairs), sum(jac(x, y) for x, y in pairs))
                    if value > best:
                        best, chosen = value, pairs
                for x, y in chosen:
                    found[(task["id"], label, first, second, y[0] - x[0], y[1] - x[1])] += 1
    return found


def test_offsets_equal_a_brute_force_matching():
    # Annotator 1's [0, 10) could go to 2's [1, 10) (Jaccard 0.9) or [0, 19) (0.53), and 1's [8, 20) only to
    # [0, 19) (0.55): the most matches takes both. [30, 40) and [33, 45) overlap 7 / 15 < 0.5: no match.
    tasks = [
        _task(1, {1: [(0, 10, "PER"), (8, 20, "PER"), (30, 40, "LOC")],
                  2: [(1, 10, "PER"), (0, 19, "PER"), (33, 45, "LOC")],
                  3: [(0, 11, "PER"), (30, 41, "LOC"), (44, 50, "PER")]}),
        _task(2, {1: [(5, 15, "LOC"), (20, 30, "PER")], 2: [(5, 15, "PER"), (21, 30, "PER"), (40, 44, "LOC")],
                  3: [(4, 15, "LOC"), (18, 30, "PER"), (22, 29, "PER")]}),
        _task(3, {1: [], 2: [(0, 5, "PER")]}),
    ]
    state, report = _report(tasks, parse_label_config(CONFIG))
    offsets = report.span_offsets  # the matches overlap F1 made when the project was scored
    pd.testing.assert_frame_equal(span_offsets(state.snapshot().mapped["ner"], jaccard=0.5), offsets)  # made again
    got = Counter(zip(offsets["task"], offsets["label"], offsets["first"], offsets["second"],
                      offsets["start_offset"], offsets["end_offset"], strict=True))
    expected = _brute_force_offsets(tasks)
    assert got == expected and sum(expected.values()) == 10
    # the pairs matched are those overlap F1 counts
    assert report.span_pairs["tp_overlap"].sum() == len(offsets)


def test_tasks_carry_each_span_controls_f1():
    two = """<View>
      <Labels name="ner" toName="text"><Label value="PER"/><Label value="LOC"/></Labels>
      <Labels name="topic" toName="text"><Label value="sport"/></Labels>
      <Choices name="tone" toName="text"><Choice value="a"/><Choice value="b"/></Choices>
      <Text name="text" value="$text"/>
    </View>"""
    tasks = [_task(1, {1: [(0, 10, "PER"), (0, 30, "sport", "topic")],
                       2: [(0, 10, "PER"), (12, 20, "LOC"), (0, 30, "sport", "topic")]}),
             _task(2, {1: [(0, 10, "PER"), (0, 30, "sport", "topic")], 2: [(1, 10, "PER")]})]
    for task in tasks:
        for annotation in task["annotations"]:
            annotation["result"].append({"from_name": "tone", "to_name": "text", "type": "choices",
                                         "value": {"choices": ["a"]}})
    state, report = _report(tasks, parse_label_config(two))
    table = report.tasks.set_index("task")
    assert [c for c in report.tasks.columns if c.startswith("f1")] == \
        ["f1:ner", "f1_overlap:ner", "f1:topic", "f1_overlap:topic"]
    # task 1: ner 2 * 1 / (1 + 2); topic both the same span. task 2: ner [0, 10) and [1, 10) match by overlap only;
    # topic marked by annotator 1 alone, so 2 * 0 / (1 + 0).
    assert table.loc[1, "f1:ner"] == pytest.approx(2 / 3) and table.loc[1, "f1:topic"] == 1.0
    assert table.loc[2, "f1:ner"] == 0.0 and table.loc[2, "f1_overlap:ner"] == 1.0 and table.loc[2, "f1:topic"] == 0.0
    for task, score in state.task_scores().items():
        for name in ("ner", "topic"):
            assert table.loc[task, f"f1:{name}"] == score.controls[name]["f1"]
    assert set(report.span_measures["control"]) == {"ner", "topic"}  # the choices are no span control
    page = render_html(report)
    # the flagged tasks' table names the control that flagged each, with its value (the F1 columns stay in the data)
    assert '<th class="text">flagged by</th><th class="">its value</th>' in page
    assert "the value its flag compares with the threshold" in page
    one = [_task(1, {1: [(0, 10, "PER")], 2: [(0, 10, "PER")]})]
    _, single = _report(one, parse_label_config(CONFIG))
    assert [c for c in single.tasks.columns if c.startswith("f1")] == ["f1", "f1_overlap"]
    assert single.tasks.loc[0, "f1"] == 1.0


def test_a_project_without_span_controls_has_no_span_section():
    config = """<View><Text name="text" value="$text"/>
      <Choices name="tone" toName="text"><Choice value="a"/><Choice value="b"/></Choices></View>"""
    tasks = [{"id": i, "data": {"text": "x"}, "annotations": [
        {"id": 10 * i + who, "completed_by": who, "created_at": "2026-01-01T00:00:00Z",
         "result": [{"from_name": "tone", "to_name": "text", "type": "choices",
                     "value": {"choices": ["a" if (i + who) % 3 else "b"]}}]} for who in (1, 2)]} for i in range(6)]
    _, report = _report(tasks, parse_label_config(config))
    assert all(report.tables()[name].empty for name in ("span_labels", "span_measures", "span_pairs", "span_offsets"))
    assert not any(c.startswith("f1") for c in report.tasks.columns)
    page = render_html(report)
    assert 'id="spans"' not in page and "pairwise F1" not in page and "mean SPA may lie" not in page


def test_labels_from_label_studio_are_escaped_in_the_section():
    config = """<View><Labels name="n&lt;1" toName="text"><Label value="&lt;script&gt;alert(1)&lt;/script&gt;"/>
      </Labels><Text name="text" value="$text"/></View>"""
    label = "<script>alert(1)</script>"
    tasks = [_task(i, {1: [(0, 10, label)], 2: [(0, 10 + i, label)]}, name="n<1") for i in range(1, 4)]
    _, report = _report(tasks, parse_label_config(config))
    assert label in set(report.span_labels["label"]) and len(report.span_offsets) == 3
    page = render_html(report)
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "n&lt;1" in page and "<h3>n<1" not in page


def test_span_tables_in_csv_and_json(bratiaa, tmp_path):
    _, report, _ = bratiaa
    data = report_json(report)
    written = {p.stem: p for p in write_report(report, tmp_path / "csv", format="csv")}
    for name in ("span_labels", "span_measures", "span_pairs", "span_offsets"):
        table = report.tables()[name]
        assert len(table) > 0 and len(data[name]) == len(table)
        assert pd.read_csv(written[name]).shape == table.shape
    write_report(report, tmp_path / "r.json", format="json")
    text = (tmp_path / "r.json").read_text()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    by_label = {row["label"]: row for row in data["span_labels"]}
    assert by_label["PER"]["f1_exact"] == pytest.approx(0.9378223435750975, abs=1e-6)
    assert {row["measure"] for row in data["span_measures"]} == {key for key, _, _ in SPAN_MEASURES}
    assert {"f1", "f1_overlap"} <= set(data["tasks"][0])
    csv = pd.read_csv(written["span_offsets"])
    assert list(csv.columns) == list(report.span_offsets.columns)
    assert (csv[["start_offset", "end_offset"]].to_numpy() == report.span_offsets[
        ["start_offset", "end_offset"]].to_numpy()).all()


_SPAN = st.tuples(st.integers(0, 20), st.integers(1, 8), st.sampled_from(["PER", "LOC"])).map(
    lambda s: (s[0], s[0] + s[1], s[2]))


@settings(max_examples=examples(25), deadline=None)
@given(marks=st.fixed_dictionaries({who: st.lists(_SPAN, max_size=3, unique_by=lambda s: s[:2]) for who in (1, 2, 3)}),
       shift=st.integers(1, 20))
def test_offsets_keep_the_most_matches_and_ignore_a_shift(marks, shift):
    tasks = [_task(1, marks)]
    _, report = _report(tasks, parse_label_config(CONFIG))
    offsets = report.span_offsets
    # the matching makes as many matches as any one-to-one matching can (the brute force's optimum count)
    assert len(offsets) == sum(_brute_force_offsets(tasks).values())
    moved = {who: [(s + shift, e + shift, label) for s, e, label in spans] for who, spans in marks.items()}
    _, shifted = _report([_task(1, moved)], parse_label_config(CONFIG))
    columns = ["label", "first", "second", "start_offset", "end_offset"]
    assert Counter(map(tuple, shifted.span_offsets[columns].to_numpy().tolist())) == \
        Counter(map(tuple, offsets[columns].to_numpy().tolist()))


def test_offset_chart_of_whole_and_fractional_offsets():
    whole = pd.DataFrame({"start_offset": [0.0] * 50 + [-31.0, 4.0], "end_offset": [0.0] * 51 + [2.0]})
    svg = offset_chart(whole, control="ner", unit="characters")
    assert svg.startswith("<svg") and "difference of the starts (characters)" in svg
    seconds = pd.DataFrame({"start_offset": [0.0, 0.25, -0.125], "end_offset": [0.5, 0.0, 0.0]})
    assert "seconds" in offset_chart(seconds, control="audio", unit="seconds")
    assert offset_chart(whole.iloc[:0], control="ner", unit="characters") == ""


def _card(html, control):
    """The headline's card of ``control``, as HTML."""
    start = html.index(f'<div class="card"><div class="name">{control} ')
    return html[start: html.index("</div></div>", start)]


def test_a_span_controls_card_leads_with_its_span_measures_and_says_what_aligned_items_count():
    # before, the card led with "SPA 0.395, alpha 0.085" beside "F1 0.632 overlap, gamma 0.713", with no word on
    # which to read
    tasks = [_task(1, {1: [(0, 5, "PER"), (10, 15, "LOC")], 2: [(0, 4, "PER"), (10, 15, "LOC")]}),
             _task(2, {1: [(3, 8, "PER")], 2: [(3, 8, "PER")]})]
    _, report = _report(tasks, parse_label_config(CONFIG), n_resamples=20)
    measures = report.span_measures.set_index("measure")
    html = render_html(report)
    card = _card(html, "ner")
    big = card[card.index('<div class="big">'):]
    assert big.startswith(f'<div class="big">F1 {measures.loc["f1_overlap", "value"]:.3f} <span class="small">'
                          "overlap</span>")
    assert f'gamma {measures.loc["gamma", "value"]:.3f}' in card
    assert card.index("F1 ") < card.index("gamma") < card.index("SPA") < card.index("alpha")
    assert "On aligned items, a one-character boundary slip counts as a disagreement: SPA" in card
    row = report.headline.set_index("control").loc["ner"]
    assert (row["n_annotations"], row["n_regions"]) == (4, 6)
    assert f"{row['n_items']} aligned items, 4 annotations, 6 regions" in card
    # the measures' table says it beside SPA and alpha; with two annotators, unitizing alpha needs no warning
    assert measures.loc["spa", "caveat"].startswith("on aligned items, a one-character boundary slip counts")
    assert measures.loc["alpha", "caveat"] == measures.loc["spa", "caveat"]
    assert measures.loc["unitizing_alpha", "caveat"] == "" and "unreliable here" not in html
    # overlap alignment: a slip is one item, a span one annotator missed is the disagreement
    state = ProjectState.from_tasks(tasks, parse_label_config(CONFIG), mapping=MappingOptions(span_alignment="overlap"),
                                    scoring=ScoringOptions(n_resamples=20))
    overlap = build_report(state.snapshot(), source="test", generated_at="now").span_measures.set_index("measure")
    assert overlap.loc["spa", "caveat"].startswith("on aligned items, a span one annotator marked and another did "
                                                   "not counts as a disagreement: spans overlapping by Jaccard >= 0.5")


def test_unitizing_alpha_with_more_than_two_annotators_on_a_task_is_shown_with_its_warning():
    # before, its row said "it can misbehave with more than two annotators" whatever the project's number
    three = [_task(1, {1: [(0, 5, "PER")], 2: [(0, 5, "PER")], 3: [(1, 5, "PER")]}),
             _task(2, {1: [(3, 8, "LOC")], 2: [(3, 8, "LOC")]})]
    state, report = _report(three, parse_label_config(CONFIG), n_resamples=20)
    caveat = report.span_measures.set_index("measure").loc["unitizing_alpha", "caveat"]
    assert caveat.startswith("unreliable here: up to 3 annotators on a task, and this form, built for two")
    html = render_html(report)
    row = html[html.index("unitizing alpha (1995/2004)"):]
    assert row.index(escape(caveat)) < row.index("</tr>")  # in the measure's own row
    assert "unitizing alpha (unreliable here: see above)" in html  # and above the per-label column
    from plugin.summary import summary_text, sync_summary

    text = summary_text(sync_summary("test", state.scores(), ScoringOptions(), dry_run=True, to_write=0))
    assert f"unitizing alpha {report.span_measures.set_index('measure').loc['unitizing_alpha', 'value']:.3f} " \
           f"({caveat})" in text
