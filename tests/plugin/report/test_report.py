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
        assert last["n_labels"] == row.n_labels  # the labels given over the items, which SPA counts


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
    assert flagged["score"].round(3).is_monotonic_increasing
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
        expected = {"mean_spa": score.spa, "mean_alpha": score.alpha,
                    **{key: score.controls.get(span, {}).get(key) for key in ("f1", "f1_overlap")}}
        for key, value in expected.items():
            assert (value is None and math.isnan(row[key])) or row[key] == value, (task, key)
        assert row["link"] == URL.format(task=task)


def test_the_flagged_table_names_the_control_that_flagged_each_task_in_the_review_queue_s_order(report):
    report, state = report
    scores = state.task_scores()
    keys = dict(zip(scores.tasks.tolist(), scores.review_keys().tolist(), strict=True))
    flagged = report.tasks[report.tasks["flagged"]]
    # the queue: the lowest score, then the least certain consensus, then the fewest annotations
    posterior = dict(zip(scores.tasks.tolist(), scores.posterior_values().tolist(), strict=True))
    queue = [(round(row.score, 3), posterior[row.task], row.n_annotations) for row in flagged.itertuples()]
    assert [keys[t] for t in flagged["task"]] == sorted(keys[t] for t in flagged["task"])
    assert queue == sorted(queue, key=lambda q: (q[0], 1.0 if math.isnan(q[1]) else q[1], q[2]))
    assert len({q[0] for q in queue}) < len(queue)  # ties there are, and they are broken
    for row in flagged.itertuples():
        score = scores[row.task]
        control = score.controls[row.flagged_by]
        value = control[control["flag_on"]] if "flag_on" in control else control.get("agreement", control["spa"])
        assert row.flagged_value == value and f"{row.flagged_by}: " in row.reasons
        assert value == row.score  # with the threshold alone, the control that flagged it is its lowest
    assert report.tasks.loc[~report.tasks["flagged"], "flagged_by"].isna().all()
    page = render_html(report)
    flagged_section = page[page.index('<section id="flagged">'):]
    flagged_section = flagged_section[:flagged_section.index("</section>")]
    assert "<th class=\"\">SPA</th>" not in flagged_section and "<th class=\"\">alpha</th>" not in flagged_section
    rule = "a task with two annotations or more is flagged when a control's agreement on it is below its threshold (0.50)"
    assert report.overview["flag_rule"] == rule
    assert f"tasks flagged: {rule}" in page.replace("&#x27;", "'")


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


def test_the_page_is_self_contained_and_holds_every_section(drawn):
    _, _, page = drawn  # the demo's page with references too, drawn once for the tests of its figures
    for section in ("headline", "time", "family", "spans", "annotators", "labels", "tasks", "sweep", "flagged"):
        assert f'id="{section}"' in page
    assert "<script" not in page and " src=" not in page and "@import" not in page
    assert not re.search(r"url\((?!#)", page)  # only references inside the page's own SVG
    external = re.findall(r'href="(https?:[^"]*)"', page)
    assert external and all(link.startswith("http://ls.example/projects/7/data?task=") for link in external)
    assert page.count("<svg") >= 1 + 4 + 4 + 1 + 1  # timeline, heatmaps, confusions, distribution, sweep
    assert page.count("<title>") >= 4 * 20  # a hover text per heatmap cell
    assert len(page) < 2_000_000


def test_the_consensus_section_names_the_prior_its_accuracies_were_fitted_under(report):
    built, _ = report
    assert built.overview["consensus_prior"] == [2.0, 1.0]
    assert ("<code>--consensus-prior 2,1</code>: 2 pseudo-counts on the diagonal, 1 shared among the other labels"
            in render_html(built))
    state = ProjectState(None, parse_label_config(CONFIG), mapping=MappingOptions(),
                         scoring=ScoringOptions(consensus_prior=(0, 0)))
    state.load(simulated_export(40, seed=3))
    plain = build_report(state.snapshot(), source="simulated", generated_at="now")
    assert "maximum-likelihood estimate (<code>--consensus-prior 0,0</code>)" in render_html(plain)


def test_the_consensus_table_gives_each_annotator_s_answers_summing_to_the_control_s_labels(report):
    # an answer is a label given on one of the control's items, as the headline's n_labels counts them: a label
    # set's yes or no of each label (topics: 4 a task), a span control's each span
    built, _ = report
    fitted = built.consensus[built.consensus["method"] == "dawid-skene"]
    assert set(fitted["control"]) == {"entities", "helpfulness", "sentiment", "topics"}
    assert (fitted["n_answers"] > 0).all()
    answered = fitted.groupby("control")["n_answers"].sum()
    given = built.headline.set_index("control")["n_labels"]
    assert {control: int(n) for control, n in answered.items()} == {control: int(n) for control, n in given.items()}
    assert answered["topics"] == 4 * built.headline.set_index("control")["n_annotations"]["topics"]
    assert '<th class="">answers</th><th class="">fit&#x27;s accuracy</th>' in render_html(built)


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


def test_annotators_named_alike_are_told_apart_in_every_table_and_chart():
    """A user known by id in one annotation and by email alone in another is two annotators whom Label Studio names
    alike: the page's confusion matrix of each (drawn by name) raised "Index contains duplicate entries" (the fuzz
    of exports found it). Each now has the id beside the name."""
    config = """<View><Text name="text" value="$text"/><Choices name="c" toName="text">
      <Choice value="a"/><Choice value="b"/></Choices></View>"""
    who = [{"id": 1, "email": "ann@example.com"}, {"email": "ann@example.com"}, 2, 3]
    tasks = [{"id": i, "data": {"text": "x"}, "annotations": [
        {"id": 10 * i + k, "completed_by": user, "created_at": "2026-01-01T00:00:00Z",
         "result": [{"from_name": "c", "to_name": "text", "type": "choices",
                     "value": {"choices": ["a" if (i + k) % 3 else "b"]}}]}
        for k, user in enumerate(who)]} for i in range(1, 9)]
    report = build_report(_state(tasks, config).snapshot(), source="t", generated_at="now",
                          people={"1": "ann@example.com"})
    names = dict(zip(report.annotators["annotator"], report.annotators["name"], strict=True))
    assert names == {"1": "ann@example.com (1)", "ann@example.com": "ann@example.com", "2": "2", "3": "3"}
    assert report.consensus_confusion.groupby("name").size().eq(4).all()  # one 2 x 2 matrix each
    assert "ann@example.com (1)" in render_html(report)


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


# The charts, read on the matplotlib figures the page draws (plugin/report/charts.py states the rules): count axes
# linear unless the counts span over three orders of magnitude (then labelled "(log scale)"), heatmaps of counts on
# one linear colour scale from 0 per figure with each count written, axes that hold every marker and error bar whole,
# and captions computed from what is drawn.

def _figures_of(report):
    """Every chart the page draws, as (function name, Chart), and the page: each ``charts.*_figure`` recorded."""
    from plugin.report import charts

    drawn = []

    def recording(name, function):
        def record(*args, **kwargs):
            chart = function(*args, **kwargs)
            if chart is not None:
                drawn.append((name, chart))
            return chart
        return record

    with pytest.MonkeyPatch.context() as patch:
        for name in charts.__all__:
            if name.endswith("_figure"):
                patch.setattr(charts, name, recording(name, getattr(charts, name)))
        page = render_html(report)
    return drawn, page


@pytest.fixture(scope="module")
def drawn():
    """The demo as a team lead's report draws it: references, a model's confusion, consensus, spans, the sweep."""
    state = ProjectState(None, parse_label_config(CONFIG), mapping=MappingOptions(),
                         scoring=ScoringOptions(min_gt_accuracy=0.7, min_gt_items=5))
    state.load(simulated_export(120, seed=3, references=True))
    report = build_report(state.snapshot(), source="simulated", generated_at="2026-11-22 12:00 UTC", task_url=URL)
    figures, page = _figures_of(report)
    return report, figures, page


def _plots(figure):
    """The axes that plot data: not colour bars, not the hidden panels of an odd number of controls."""
    return [ax for ax in figure.axes if ax.get_label() != "<colorbar>" and ax.get_visible()]


def _outside(figure):
    """Every plotted point, marker, bar, error bar and written count not wholly inside its axes (display pixels).

    A marker's centre must lie at least its radius inside, so none is cut at the axis; a line's points, a band's and
    an error bar's ends, a bar's top and sides, and each text in the axes (a cell's or a bar's count) inside."""
    from matplotlib import rc_context
    from matplotlib.collections import PathCollection
    from matplotlib.patches import Rectangle

    from plugin.report.charts import STYLE

    with rc_context(STYLE):
        figure.draw_without_rendering()  # the constrained layout placed, as in the SVG
    pixel = figure.dpi / 72
    out = []
    for ax in _plots(figure):
        box = ax.bbox

        def check(points, radius, what, ax=ax, box=box):
            points = np.asarray(points, dtype=float).reshape(-1, 2)
            points = points[np.isfinite(points).all(axis=1)]
            inside = ((points[:, 0] >= box.x0 + radius - 1) & (points[:, 0] <= box.x1 - radius + 1)
                      & (points[:, 1] >= box.y0 + radius - 1) & (points[:, 1] <= box.y1 - radius + 1))
            if not inside.all():
                out.append((ax.get_title(), what, points[~inside][:3].round(1).tolist(), box.bounds))

        for line in ax.lines:
            marker = line.get_marker() not in (None, "None", "none", "", " ")
            radius = line.get_markersize() / 2 * pixel if marker else 0.0
            check(line.get_transform().transform(line.get_xydata()), radius, f"line {line.get_label()}")
            if marker:  # and in data coordinates: every marked point within the limits
                (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
                data = line.get_xydata()
                data = data[np.isfinite(data).all(axis=1)]
                assert ((data[:, 1] >= y0) & (data[:, 1] <= y1)).all(), (ax.get_title(), "ylim", ax.get_ylim())
                assert ((data[:, 0] >= x0) & (data[:, 0] <= x1)).all(), (ax.get_title(), "xlim", ax.get_xlim())
        for collection in ax.collections:
            if isinstance(collection, PathCollection):  # scatter: its markers
                sizes = collection.get_sizes()
                radius = float(np.sqrt(sizes.max()) / 2 * pixel) if len(sizes) else 0.0
                check(collection.get_offset_transform().transform(collection.get_offsets()), radius, "scatter")
            else:  # a band (fill_between), error bars
                for path in collection.get_paths():
                    check(collection.get_transform().transform(path.vertices), 0.0, type(collection).__name__)
        for patch in ax.patches:
            if isinstance(patch, Rectangle) and patch.get_visible() and patch.get_height():  # an empty bar: none
                extent = patch.get_window_extent()
                corners = [(extent.x0, extent.y1), (extent.x1, extent.y1)]
                if ax.get_yscale() == "linear":  # a log axis starts its bars below its bottom, at 0
                    corners += [(extent.x0, extent.y0), (extent.x1, extent.y0)]
                check(corners, 0.0, "bar or cell")
        for text in ax.texts:
            if text.get_text():
                extent = text.get_window_extent()
                check([(extent.x0, extent.y0), (extent.x1, extent.y1)], 0.0, f"text {text.get_text()}")
    return out


def test_every_chart_holds_its_data_inside_its_axes(drawn):
    _, figures, _ = drawn
    names = {name for name, _ in figures}
    assert names >= {"timeline_figure", "offset_figure", "heatmap_figure", "reference_figure", "confusion_figure",
                     "trust_figure", "probability_figure", "distribution_figure", "sweep_figure"}
    for name, chart in figures:
        assert not _outside(chart.figure), (name, chart.caption, _outside(chart.figure)[:3])


def test_agreement_axes_hold_0_1_and_every_value_with_a_margin(drawn):
    report, figures, _ = drawn
    timeline = next(chart for name, chart in figures if name == "timeline_figure")
    for ax in _plots(timeline.figure):
        part = report.timeline[report.timeline["control"] == ax.get_title(loc="left")]
        values = part[["spa", "spa_low", "spa_high", "alpha"]].to_numpy(dtype=float)
        low, high = ax.get_ylim()
        assert low < min(0.0, np.nanmin(values)) and high > max(1.0, np.nanmax(values))
    sweep = next(chart for name, chart in figures if name == "sweep_figure")
    (ax,) = _plots(sweep.figure)
    low, high = ax.get_ylim()
    assert low < 0 < report.sweep["kappa"].min() and high > 1  # not from 0.30: the rise drawn in proportion


def test_a_low_alpha_is_drawn_whole_not_clipped_by_the_axis():
    from plugin.report.charts import timeline_figure

    times = pd.date_range("2026-01-05 12:00", periods=6, freq="h", tz="UTC").astype(str)
    timeline = pd.DataFrame({"control": "c", "time": times, "spa": [0.3, 0.5, 0.6, 0.6, 0.7, 1.0],
                             "spa_low": [0.0, 0.3, 0.4, 0.5, 0.6, 1.0], "spa_high": [0.9, 0.8, 0.8, 0.7, 0.8, 1.0],
                             "alpha": [-0.4, -0.1, 0.2, 0.3, 0.4, 1.0]})
    chart = timeline_figure(timeline, controls=["c"])
    assert chart.figure.axes[0].get_ylim()[0] < -0.4
    assert not _outside(chart.figure)
    assert "alpha -0.40 to 1.00, 1.00 at the end" in chart.caption


def test_count_axes_are_linear_and_log_only_where_labelled_and_needed(drawn):
    from plugin.report.charts import log_needed, offset_figure

    _, figures, _ = drawn
    counted = 0
    for name, chart in figures:
        for ax in _plots(chart.figure):
            for scale, label in ((ax.get_yscale(), ax.get_ylabel()), (ax.get_xscale(), ax.get_xlabel())):
                assert (scale == "log") == label.endswith("(log scale)"), (name, scale, label)
            if name in ("offset_figure", "distribution_figure"):
                counted += 1
                heights = [p.get_height() for p in ax.patches]
                assert ax.get_yscale() == "linear" and not log_needed(heights)  # the demo's 460 against 10: linear
                assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= max(heights)
    assert counted == 3  # the starts, the ends, the task scores
    # 460 pairs against 10 and 1: a linear axis, each bar's count written (460 twice as tall as 10 on a log axis)
    few = pd.DataFrame({"start_offset": [0.0] * 460 + [1.0] * 10 + [-2.0], "end_offset": [0.0] * 471})
    chart = offset_figure(few, control="ner", unit="characters")
    ax = chart.figure.axes[0]
    assert ax.get_yscale() == "linear" and ax.get_ylabel() == "matched pairs" and "linear axis" in chart.caption
    assert sorted(t.get_text() for t in ax.texts if t.get_text()) == ["1", "10", "460"]
    # 5,000 against 1 (over three orders of magnitude): log, and said so on the axis and in the caption
    many = pd.DataFrame({"start_offset": [0.0] * 5000 + [3.0], "end_offset": [0.0] * 5001})
    chart = offset_figure(many, control="ner", unit="characters")
    ax = chart.figure.axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "matched pairs (log scale)"
    assert "log axis" in chart.caption and "1 to 5,001" in chart.caption
    assert not _outside(chart.figure)


def test_count_heatmaps_have_one_linear_scale_from_zero_per_figure_and_write_each_count(drawn):
    from matplotlib.colors import LogNorm

    from plugin.report.charts import MAX_WRITTEN, _count, confusion_figure

    _, figures, _ = drawn
    heatmaps = 0
    for name, chart in figures:
        images = [image for ax in _plots(chart.figure) for image in ax.get_images()]
        if name == "heatmap_figure":  # kappa, not a count: its own fixed scale, -1 through 0 (chance) to 1
            (bar,) = [ax for ax in chart.figure.axes if ax.get_label() == "<colorbar>"]
            norm = bar._colorbar.norm
            assert (norm.vmin, norm.vmax) == (-1, 1) and not images
            continue
        if not images:
            continue
        heatmaps += 1
        norms = [image.norm for image in images]
        assert all(type(norm).__name__ == "Normalize" and not isinstance(norm, LogNorm) for norm in norms), name
        assert {norm.vmin for norm in norms} == {0.0} and len({norm.vmax for norm in norms}) == 1, name
        values = np.concatenate([np.asarray(image.get_array(), dtype=float).ravel() for image in images])
        top = norms[0].vmax
        assert top == (1.0 if name == "probability_figure" else np.nanmax(values)), name
        bars = [ax for ax in chart.figure.axes if ax.get_label() == "<colorbar>"]
        assert bars and all("log" not in ax.get_ylabel() for ax in bars), name
        (ax,) = _plots(chart.figure)
        side = images[0].get_array().shape[0]
        if name == "confusion_figure" and side <= MAX_WRITTEN:
            written = sorted(t.get_text() for t in ax.texts)
            assert written == sorted(_count(v) for v in values), name
    assert heatmaps >= 4 + 1 + 4 * 3  # coincidences, a model's confusion, the least trusted annotators'
    # a cell of 17 beside one of 460 takes 17/460 of the colour scale, not half of it (log(1 + count) did)
    cells = pd.DataFrame({"first": ["a", "a", "b", "b"], "second": ["a", "b", "a", "b"],
                          "coincidences": [460.0, 17.0, 17.0, 0.0]})
    chart = confusion_figure(cells, control="c")
    image = chart.figure.axes[0].get_images()[0]
    assert image.norm(17.0) == pytest.approx(17 / 460) and image.norm(0.0) == 0
    assert "Colour linear from 0 (white) to 460" in chart.caption


def test_every_chart_has_a_caption_on_the_page(drawn):
    from html import escape

    _, figures, page = drawn
    assert page.count('<figure class="chart">') == page.count("<svg") == len(figures)
    for name, chart in figures:
        assert chart.caption and f"{escape(chart.caption)}</figcaption>" in page, name


def test_the_sweep_caption_says_what_the_curve_does(drawn):
    from plugin.report.charts import sweep_caption, sweep_figure

    report, figures, page = drawn
    sweep = report.sweep.sort_values("p")
    first, last = sweep["kappa"].iloc[0], sweep["kappa"].iloc[-1]
    assert last > first  # the demo's rises towards p = 1: annotators agree more on their first choice
    caption = next(chart for name, chart in figures if name == "sweep_figure").caption
    assert caption == sweep_caption(report.sweep)
    assert f"rises from {first:.2f} at p = 0.5 to {last:.2f} at p = 1.0" in caption
    assert "more on their first choice than on the set of choices" in caption
    assert "rises towards p = 0.5 means" not in page  # the fixed text that described another curve
    falling = pd.DataFrame({"control": "c", "p": [1.0, 0.9, 0.8, 0.7, 0.6, 0.5],
                            "kappa": [0.2, 0.3, 0.4, 0.5, 0.6, 0.7]})
    assert sweep_caption(falling) == ("c: the augmented kappa falls from 0.70 at p = 0.5 to 0.20 at p = 1.0: "
                                      "annotators agree on the set of choices more than on which comes first.")
    bent = falling.assign(kappa=[0.5, 0.6, 0.7, 0.6, 0.5, 0.4])
    assert "rises from 0.40 at p = 0.5 to 0.70 at p = 0.8, then falls to 0.50 at p = 1.0 (range 0.40 to 0.70)" \
        in sweep_caption(bent)
    assert "undefined at every p" in sweep_caption(falling.assign(kappa=float("nan")))
    chart = sweep_figure(falling)
    assert not _outside(chart.figure) and chart.figure.axes[0].get_ylim()[0] < 0


def test_a_reference_chart_of_one_annotator_is_drawn_whole_without_numpy_s_deprecation():
    """One annotator against a reference: matplotlib read the error bar's one-element array as a scalar, which
    numpy deprecates (and will refuse); the fuzz of exports met it. The bar is passed as lists."""
    import warnings

    from plugin.report.charts import reference_figure

    references = pd.DataFrame([{"control": "c", "reference": "ground truth", "annotator": "1", "name": "1",
                                "n_items": 4, "accuracy": 0.75, "accuracy_low": 0.3, "accuracy_high": 0.95}])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        chart = reference_figure(references, control="c")
    assert chart is not None and not _outside(chart.figure)


def _annotator_tables(html):
    """Per control, the annotators table's headings, from the Annotators section."""
    section = html[html.index('<section id="annotators">'):]
    section = section[: section.index("</section>")]
    out = {}
    for part in section.split("<h3>")[1:]:
        name = part[: part.index("</h3>")]
        table = part[part.index("<table>"):]
        out[name] = re.findall(r"<th[^>]*>([^<]*)</th>", table[: table.index("</thead>")])
    return section, out


def test_outliers_and_the_compared_column_say_what_they_are(report):
    # before, the outlier column was blank for every annotator, one of mean kappa -0.087 among them, and "compared"
    # equalled "items" in every row
    report, _ = report
    html = render_html(report)
    section, headings = _annotator_tables(html)
    assert "a mean kappa below 0" in section and "2 scaled median absolute deviations below" in section
    below = report.annotators[report.annotators["mean_pairwise"] < 0]
    assert len(below) and below["outlier"].all()  # every annotator below chance is an outlier
    assert (report.annotators["n_compared"] == report.annotators["n_items"]).all()  # 2 or 3 annotators a task
    assert all(columns == ["annotator", "items", "mean kappa", "with majority", "outlier"]
               for columns in headings.values())
    # a task annotated once: its annotator's items are more than those compared, and the column shows
    tasks = simulated_export(40, seed=1)
    tasks[0]["annotations"] = tasks[0]["annotations"][:1]
    alone = build_report(_state(tasks).snapshot(), source="simulated", generated_at="now")
    _, headings = _annotator_tables(render_html(alone))
    assert headings["sentiment"] == ["annotator", "items", "compared", "mean kappa", "with majority", "outlier"]
    who = str(tasks[0]["annotations"][0]["completed_by"])
    row = alone.annotators[(alone.annotators["control"] == "sentiment")].set_index("annotator").loc[who]
    assert row["n_items"] == row["n_compared"] + 1
