"""The admin report's tables, formats and page, from the demo's simulated project read offline."""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from agreement import annotator_labels, cohen_kappa, label_counts
from plugin.cli import main
from plugin.demo import CONFIG, RELIABILITY, simulated_export
from plugin.mapping.labelconfig import parse_label_config
from plugin.report import build_report, write_report
from plugin.report.page import render_html
from plugin.settings import MappingOptions, ReportOptions, ScoringOptions
from plugin.state.project import ProjectState

URL = "http://ls.example/projects/7/data?task={task}"


def _state(tasks, config=CONFIG):
    state = ProjectState(None, parse_label_config(config), mapping=MappingOptions(), scoring=ScoringOptions())
    state.load(tasks)
    return state


@pytest.fixture(scope="module")
def report():
    state = _state(simulated_export(200, seed=3))
    people = {str(i + 1): f"Annotator {i + 1} <a{i + 1}@example.com>" for i in range(5)}
    return build_report(state.snapshot(), source="simulated", generated_at="2026-11-22 12:00 UTC", people=people,
                        task_url=URL), state


def test_headline_equals_the_project_scores(report):
    report, state = report
    scores = state.scores()
    for row in report.headline.itertuples():
        control = scores.controls[row.control]
        assert row.spa == control.spa
        assert (row.spa_low, row.spa_high) == control.spa_ci
        assert row.alpha == control.alpha
        width = control.spa_ci[1] - control.spa_ci[0]
        expected = max(0, math.ceil(control.n_annotations * (width / 0.1) ** 2 - control.n_annotations - 1e-9))
        assert row.annotations_needed == expected
    assert report.overview["n_tasks"] == 200
    assert report.overview["flagged"] == sum(t.flagged for t in scores.tasks.values())


def test_a_report_of_scores_already_computed_is_the_same_report(report):
    # a caller that scored the snapshot hands its scores over; the report is the one it would compute itself
    from plugin.report import report_json

    made, state = report
    snapshot = state.snapshot()
    people = {str(i + 1): f"Annotator {i + 1} <a{i + 1}@example.com>" for i in range(5)}
    given = build_report(snapshot, source="simulated", generated_at="2026-11-22 12:00 UTC", people=people,
                         task_url=URL, scores=snapshot.scores())
    assert json.dumps(report_json(given), sort_keys=True) == json.dumps(report_json(made), sort_keys=True)


def test_the_timeline_ends_at_the_headline(report):
    report, _ = report
    for row in report.headline.itertuples():
        last = report.timeline[report.timeline["control"] == row.control].iloc[-1]
        assert last["spa"] == pytest.approx(row.spa, abs=1e-6)  # the headline is rounded to 6 places
        assert last["alpha"] == pytest.approx(row.alpha, abs=1e-6)
        assert last["n_annotations"] == row.n_annotations


def test_annotators_are_named_and_the_least_reliable_is_the_outlier(report):
    report, _ = report
    sentiment = report.annotators[report.annotators["control"] == "sentiment"].set_index("annotator")
    assert sentiment.loc["1", "name"] == "Annotator 1 <a1@example.com>"
    # The simulation's reliabilities fall with the annotator's number (0.95 ... 0.4); over 200 tasks the mean kappas
    # keep the order of the three least reliable, and none of the three most reliable is called an outlier.
    ranking = list(sentiment["mean_pairwise"].sort_values(ascending=False).index)
    assert ranking[2:] == ["3", "4", "5"] and RELIABILITY[4] == min(RELIABILITY)
    assert not sentiment.loc[["1", "2", "3"], "outlier"].any()


def test_pairwise_kappa_equals_cohen_on_the_pair_table(report):
    report, state = report
    rows = state.controls["sentiment"].mapped().rows
    labels = annotator_labels(rows)
    names = {str(i + 1): f"Annotator {i + 1} <a{i + 1}@example.com>" for i in range(5)}
    pairs = report.pairwise[report.pairwise["control"] == "sentiment"]
    for a in range(5):
        for b in range(a + 1, 5):
            table = labels.table(a, b)
            first, second = names[labels.annotators[a]], names[labels.annotators[b]]
            row = pairs[(pairs["first"] == first) & (pairs["second"] == second)]
            assert row["kappa"].iloc[0] == pytest.approx(cohen_kappa(table), abs=1e-6)
            assert row["n_items"].iloc[0] == table.sum()


def test_confusion_is_the_coincidence_matrix(report):
    report, state = report
    rows = state.controls["sentiment"].mapped().rows
    counts = label_counts(rows, categories=("positive", "negative", "neutral"))
    confusion = report.confusion[report.confusion["control"] == "sentiment"]
    matrix = confusion.pivot(index="first", columns="second", values="coincidences")
    # o_ck = sum_i n_ic (n_ik - [c = k]) / (n_i - 1), by brute force over items
    expected = np.zeros((3, 3))
    for row in counts.counts:
        n = row.sum()
        if n >= 2:
            expected += (np.outer(row, row) - np.diag(row)) / (n - 1)
    labels = ["positive", "negative", "neutral"]
    assert matrix.loc[labels, labels].to_numpy() == pytest.approx(expected)


def test_tasks_are_worst_first_with_links(report):
    report, state = report
    tasks = report.tasks
    flagged = tasks[tasks["flagged"]]
    assert len(flagged) == report.overview["flagged"] > 0
    assert tasks["flagged"].iloc[: len(flagged)].all()  # the flagged first
    assert flagged["score"].is_monotonic_increasing
    # The histogram draws the score the flag compares: every task left of the threshold is red.
    threshold = report.overview["threshold"]
    below = tasks[(tasks["score"] < threshold) & (tasks["n_annotations"] >= 2)]
    assert len(below) > 0 and below["flagged"].all()
    scores = state.task_scores()
    # The flag's value per control: a span control's flag_on (overlap F1), a rating's weighted agreement, else SPA.
    def flag_value(control):
        return control[control["flag_on"]] if "flag_on" in control else control.get("agreement", control["spa"])

    lowest = {t: min(v for c in s.controls.values() if (v := flag_value(c)) is not None)
              for t, s in scores.items() if any(flag_value(c) is not None for c in s.controls.values())}
    assert tasks.set_index("task")["score"].dropna().to_dict() == pytest.approx(lowest)
    assert flagged["link"].iloc[0] == URL.format(task=flagged["task"].iloc[0])
    assert all(reason for reason in flagged["reasons"])


def test_the_task_table_reads_each_task_as_its_score_does(report):
    # the table is read from the score columns; each row must say what the task's own TaskScore says
    report, state = report
    table = report.tasks.set_index("task")
    span = next(name for name, control in state.controls.items() if control.spans is not None)
    assert len(table) == len(state.task_scores())
    for task, score in state.task_scores().items():
        row = table.loc[task]
        assert (row["n_annotations"], bool(row["flagged"]), row["reasons"]) == (
            score.n_annotations, score.flagged, "; ".join(score.reasons))
        expected = {"spa": score.spa, "alpha": score.alpha,
                    **{key: score.controls.get(span, {}).get(key) for key in ("f1", "f1_overlap")}}
        for key, value in expected.items():
            assert (value is None and math.isnan(row[key])) or row[key] == value, (task, key)
        assert row["link"] == URL.format(task=task)


def test_json_and_csv_hold_the_same_tables_and_no_nan(report, tmp_path):
    report, _ = report
    write_report(report, tmp_path / "r.json", format="json")
    data = json.loads((tmp_path / "r.json").read_text(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    written = write_report(report, tmp_path / "csv", format="csv")
    assert {p.stem for p in written} == set(report.tables()) == set(data) - {"meta"}
    for name, table in report.tables().items():
        assert len(data[name]) == len(table)
        assert len(pd.read_csv(tmp_path / "csv" / f"{name}.csv")) == len(table)
    assert data["meta"]["n_tasks"] == 200
    with pytest.raises(ValueError, match="Unknown report format"):
        write_report(report, tmp_path / "x", format="pdf")


def test_the_page_is_self_contained_and_holds_every_section(report):
    report, _ = report
    page = render_html(report)
    for section in ("headline", "time", "family", "spans", "annotators", "labels", "tasks", "sweep", "flagged"):
        assert f'id="{section}"' in page
    assert "<script" not in page and " src=" not in page and "@import" not in page
    assert not re.search(r"url\((?!#)", page)  # only references inside the page's own SVG
    external = re.findall(r'href="(https?:[^"]*)"', page)
    assert external and all(link.startswith("http://ls.example/projects/7/data?task=") for link in external)
    assert page.count("<svg") >= 1 + 4 + 4 + 1 + 1  # timeline, heatmaps, confusions, distribution, sweep
    assert page.count("<title>") >= 4 * 20  # a hover text per heatmap cell
    assert len(page) < 2_000_000


def test_text_from_label_studio_is_escaped():
    config = """<View><Text name="text" value="$text"/><Choices name="c&lt;1" toName="text">
      <Choice value="&lt;script&gt;alert(1)&lt;/script&gt;"/><Choice value="b"/></Choices></View>"""
    tasks = [{"id": i, "data": {"text": "x"}, "annotations": [
        {"id": 10 * i + who, "completed_by": who, "created_at": f"2026-01-0{who}T00:00:00Z",
         "result": [{"from_name": "c<1", "to_name": "text", "type": "choices",
                     "value": {"choices": ["<script>alert(1)</script>" if (i + who) % 3 else "b"]}}]}
        for who in (1, 2)]} for i in range(1, 7)]
    people = {"1": "<img src=x onerror=alert(2)>"}
    page = render_html(build_report(_state(tasks, config).snapshot(), source="<b>export</b>", generated_at="now",
                                    people=people))
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "<img src=x" not in page and "<b>export" not in page


def test_many_distinct_labels_are_summarized_not_drawn():
    config = '<View><Text name="text" value="$text"/><TextArea name="answer" toName="text"/></View>'
    tasks = [{"id": i, "data": {"text": "x"}, "annotations": [
        {"id": 10 * i + who, "completed_by": who, "created_at": "2026-01-01T00:00:00Z",
         "result": [{"from_name": "answer", "to_name": "text", "type": "textarea",
                     "value": {"text": [f"answer {i} {who % 2}"]}}]} for who in (1, 2, 3)]} for i in range(30)]
    report = build_report(_state(tasks, config).snapshot(), source="t", generated_at="now",
                          options=ReportOptions(max_categories=10))
    assert list(report.family["label"]) == ["(all labels)"]
    assert report.confusion.empty
    assert "60 distinct labels" in " ".join(report.notes["message"])


def test_an_export_names_its_annotators_from_its_user_objects(tmp_path, capsys):
    # A Label Studio JSON export writes completed_by as the user object; the offline report and sync name the
    # annotators from it as the live ones do from Label Studio's users (an annotator given by id stays an id).
    tasks = simulated_export(30)
    users = {1: {"id": 1, "email": "ann@example.com", "first_name": "Ann", "last_name": "Lee"},
             2: {"id": 2, "email": "bo@example.com", "first_name": "", "last_name": ""}}
    for task in tasks:
        for annotation in task["annotations"]:
            annotation["completed_by"] = users.get(annotation["completed_by"], annotation["completed_by"])
    export, config = tmp_path / "export.json", tmp_path / "config.xml"
    export.write_text(json.dumps(tasks))
    config.write_text(CONFIG)
    out = tmp_path / "r.json"
    assert main(["report", "--export", str(export), "--label-config", str(config), "--out", str(out), "--format",
                 "json", "--quiet"]) == 0
    names = {row["annotator"]: row["name"] for row in json.loads(out.read_text())["annotators"]}
    assert names["1"] == "Ann Lee <ann@example.com>" and names["2"] == "bo@example.com" and names["3"] == "3"
    capsys.readouterr()
    assert main(["sync", "--export", str(export), "--label-config", str(config), "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = {row["annotator"]: row["name"] for row in summary["controls"]["sentiment"]["annotators"]}
    assert rows["1"] == "Ann Lee <ann@example.com>" and rows["3"] == "3"


def test_report_command_offline(tmp_path, capsys):
    export = tmp_path / "export.json"
    export.write_text(json.dumps(simulated_export(40)))
    config = tmp_path / "config.xml"
    config.write_text(CONFIG)
    assert main(["report", "--export", str(export), "--label-config", str(config), "--out",
                 str(tmp_path / "r.html"), "--quiet"]) == 0
    assert "Wrote the report of 40 tasks" in capsys.readouterr().out
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["report", "--out", str(tmp_path / "x.html")]) == 2
    assert "either --project" in capsys.readouterr().err
    assert main(["report", "--export", str(tmp_path / "missing.json"), "--out", str(tmp_path / "x.html")]) == 2
    assert main(["report", "--export", str(export), "--out", str(tmp_path / "x"), "--target-width", "0"]) == 2
    assert "target interval width" in capsys.readouterr().err


def test_the_demo_s_annotators_slip_span_boundaries_so_overlap_f1_forgives_what_exact_f1_does_not(report):
    report, _ = report
    # before, no simulated annotator ever slipped a boundary: overlap F1 equalled exact F1, one bar of offsets
    measures = report.span_measures.set_index(["control", "measure"])["value"]
    assert measures[("entities", "f1_overlap")] > measures[("entities", "f1_exact")] + 0.03
    offsets = report.span_offsets[report.span_offsets["control"] == "entities"]
    slipped = (offsets["start_offset"] != 0) | (offsets["end_offset"] != 0)
    assert 0.03 < slipped.mean() < 0.5 and set(offsets["start_offset"]) | set(offsets["end_offset"]) >= {-1, 1}
