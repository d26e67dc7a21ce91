"""Span controls scored through the plugin: pairwise F1, unitizing alpha, u-alpha and gamma, per project and task.

The reference values come from outside this project (sources beside each
test); the offline path is the one ``sync --export`` takes
(:meth:`plugin.state.project.ProjectState.from_tasks`, then its scores).
"""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugin.cli import main
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.exports import export_project, read_export
from tests.plugin.conftest import DATA
from tests.profiles import examples

SPANS = DATA / "spans"
CONFIG = """<View>
  <Labels name="label" toName="text"><Label value="PER"/><Label value="LOC"/><Label value="ORG"/></Labels>
  <Text name="text" value="$text"/>
</View>"""
TEXT = "Barack Obama visited Paris in May."


def _task(task, marks, text=TEXT):
    """A task as Label Studio exports it: ``marks`` = {annotator id: [(start, end, label), ...]}."""
    annotations = [{"id": task * 100 + who, "completed_by": who, "was_cancelled": False, "ground_truth": False,
                    "result": [{"id": f"r{task}-{who}-{i}", "from_name": "label", "to_name": "text", "type": "labels",
                                "value": {"start": s, "end": e, "text": text[s:e], "labels": [label]}}
                               for i, (s, e, label) in enumerate(spans)]}
                   for who, spans in marks.items()]
    return {"id": task, "data": {"text": text}, "annotations": annotations, "meta": {}}


def _state(tasks, **scoring):
    return ProjectState.from_tasks(tasks, parse_label_config(CONFIG), mapping=MappingOptions(),
                                   scoring=ScoringOptions(**scoring))


# Krippendorff (2004), Content Analysis, 2nd ed., p. 254: unitizing alpha 0.8591, c 0.7286 (D_o 0.0144, D_e 0.0532),
# k 1.0; the 2016 u-alpha of the same example is 0.5909 (PyPI krippendorff-unitized-alpha, quallmer's R code).
# The export is made by tests/data/spans/krippendorff2004_export.py.
def test_krippendorff_2004_through_sync_export(capsys):
    assert main(["sync", "--export", str(SPANS / "krippendorff2004.json"), "--label-config",
                 str(SPANS / "krippendorff2004_config.xml"), "--json", "--quiet"]) == 0
    spans = json.loads(capsys.readouterr().out)["controls"]["label"]["spans"]
    unitizing = spans["unitizing_alpha"]
    assert unitizing["value"] == pytest.approx(0.858665, abs=1e-6)
    assert unitizing["per_label"]["c"]["value"] == pytest.approx(0.7286, abs=5e-5)
    assert unitizing["per_label"]["c"]["observed"] == pytest.approx(0.0144, abs=5e-5)
    assert unitizing["per_label"]["c"]["expected"] == pytest.approx(0.0532, abs=5e-5)
    assert unitizing["per_label"]["k"]["value"] == 1.0
    assert spans["u_alpha"]["value"] == pytest.approx(0.5909, abs=5e-5)
    assert spans["lengths"] == "text" and spans["n_continua"] == 1 and spans["n_units"] == 9
    # the c units differ at their boundaries: exact F1 counts 2 of 4 + 5 spans, overlap at 0.5 one more
    assert spans["f1"]["exact"]["pairs"] == [{"annotators": ["1", "2"], "f1": 0.444444, "tp": 2, "n_a": 4, "n_b": 5}]
    assert spans["f1"]["overlap"]["mean"] == pytest.approx(2 * 3 / 9, abs=1e-6)
    assert spans["f1"]["overlap"]["jaccard"] == 0.5
    gamma = spans["gamma"]
    assert gamma["seed"] == 0 and gamma["n_samples"] == 30 and gamma["low"] <= gamma["value"] <= gamma["high"]


@pytest.fixture(scope="module")
def bratiaa():
    tasks, controls = export_project(DATA / "bratiaa" / "export.json")
    state = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    return tasks, controls, state, state.scores(), json.loads((DATA / "bratiaa_reference.json").read_text())


# bratiaa 0.1.4 on its example project (tests/data/bratiaa/SOURCE.md), recorded by tests/data/bratiaa_reference.py:
# per label LOC 0.819, MISC 0.840, ORG 0.906, PER 0.938 (mean over the 6 annotator pairs, population SD).
def test_bratiaa_per_label_f1_in_the_project_scores(bratiaa):
    _, _, _, scores, reference = bratiaa
    f1 = scores.controls["label"].spans["f1"]["exact"]
    for label, value in reference["per_label"].items():
        assert f1["per_label"][label]["mean"] == pytest.approx(value["mean"], abs=1e-6)
        assert f1["per_label"][label]["sd"] == pytest.approx(value["sd"], abs=1e-6)
        assert f1["per_label"][label]["n_pairs"] == 6
    assert (f1["mean"], f1["sd"]) == pytest.approx((reference["total"]["mean"], reference["total"]["sd"]), abs=1e-6)
    assert len(f1["pairs"]) == 6


def test_bratiaa_per_document_f1_in_each_task_block(bratiaa):
    tasks, _, state, _, reference = bratiaa
    blocks = state.blocks(updated_at="now")
    for task in tasks:
        values = blocks[task["id"]]["controls"]["label"]
        assert values["f1"] == pytest.approx(reference["per_document"][task["data"]["document"]]["mean"], abs=1e-6)
        assert values["f1_overlap"] >= values["f1"]
        assert -1.0 < values["gamma"] <= 1.0
        assert values["flag_on"] == "f1_overlap"


def _canonical(state):
    return {task: (score.flagged, score.reasons, score.controls) for task, score in state.task_scores().items()}


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(7)), early=st.lists(st.integers(0, 6), max_size=3))
def test_live_equals_batch(bratiaa, order, early):
    """Tasks set one by one in any order, scored as they come (some first without their last annotation), give the
    batch's f1, f1_overlap and gamma for every task and the batch's project F1 live."""
    tasks, controls, batch, scores, _ = bratiaa
    live = ProjectState(None, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    for index in early:  # an earlier state of a task, replaced later
        partial = {**tasks[index], "annotations": tasks[index]["annotations"][:-1]}
        live.set_task(partial)
        live.task_scores([partial["id"]])
    for index in order:
        live.set_task(tasks[index])
        live.task_scores([tasks[index]["id"]])
    assert _canonical(live) == _canonical(batch)
    f1 = scores.controls["label"].spans["f1"]
    assert live.live_summary()["label"]["f1"] == {"exact": f1["exact"]["mean"], "overlap": f1["overlap"]["mean"]}


def test_task_gamma_is_none_before_the_first_full_scoring_and_then_held():
    tasks = [_task(1, {1: [(0, 12, "PER")], 2: [(0, 10, "PER")]}),
             _task(2, {1: [(0, 12, "PER"), (21, 26, "LOC")], 2: [(0, 12, "PER"), (21, 26, "ORG")]})]
    state = _state([])
    state.set_task(tasks[0])
    assert state.task_scores([1])[1].controls["label"]["gamma"] is None
    state.set_task(tasks[1])
    full = state.task_scores()  # every task: the expected disorder is sampled here
    expected = state.controls["label"].spans.expected.value
    assert full[1].controls["label"]["gamma"] is not None
    state.set_task(_task(1, {1: [(0, 12, "PER")], 2: [(0, 12, "PER")]}))
    assert state.task_scores([1])[1].controls["label"]["gamma"] == 1.0  # no disorder
    assert state.controls["label"].spans.expected.value == expected  # held until the next full scoring


def test_a_boundary_two_characters_off_flags_only_with_exact_f1():
    tasks = [_task(1, {1: [(0, 12, "PER")], 2: [(0, 10, "PER")]})]  # Jaccard 10/12
    default = _state(tasks).task_scores()[1]
    assert not default.flagged
    assert default.controls["label"]["f1_overlap"] == 1.0 and default.controls["label"]["f1"] == 0.0
    exact = _state(tasks, span_flag_on="f1").task_scores()[1]
    assert exact.flagged and exact.reasons == ("label: 0 of 2 spans matched (F1 0.00 below 0.50)",)


@pytest.mark.parametrize(("marks", "matched"), [
    ({1: [(0, 12, "PER"), (21, 26, "LOC")], 2: [(0, 12, "PER")]}, "2 of 3 spans"),  # a missed entity: F1 2/3 ...
    ({1: [(21, 26, "LOC")], 2: []}, "0 of 1 span"),  # ... and alone: 0
    ({1: [(21, 26, "LOC")], 2: [(21, 26, "ORG")]}, "0 of 2 spans"),  # a differently labelled entity
])
def test_a_missed_or_relabelled_entity_lowers_overlap_f1(marks, matched):
    score = _state([_task(1, marks)], threshold=0.7).task_scores()[1]
    value = score.controls["label"]["f1_overlap"]
    assert value == pytest.approx(2 / 3 if len(marks[2]) == 1 and marks[2][0][2] == "PER" else 0.0, abs=1e-6)
    assert score.flagged and score.reasons[0] == f"label: {matched} matched (overlap F1 {value:.2f} below 0.70)"


def test_span_flag_on_gamma_and_items_and_the_score_mirrored(tmp_path, capsys):
    tasks = [_task(1, {1: [(0, 12, "PER")], 2: [(0, 10, "PER")]}), _task(2, {1: [(21, 26, "LOC")], 2: []})]
    path, config = tmp_path / "export.json", tmp_path / "config.xml"
    path.write_text(json.dumps(tasks))
    config.write_text(CONFIG)
    flagged = {}
    for flag_on in ("f1-overlap", "f1", "items", "gamma"):
        assert main(["sync", "--export", str(path), "--label-config", str(config), "--json", "--quiet",
                     "--span-flag-on", flag_on]) == 0
        flagged[flag_on] = json.loads(capsys.readouterr().out)["flagged"]
    assert flagged["f1-overlap"] == 1 and flagged["f1"] == 2 and flagged["items"] == 2
    state = _state(tasks, span_flag_on="gamma")
    scores = state.task_scores()
    assert scores[1].controls["label"]["flag_on"] == "gamma"
    # by hand (Mathet et al. 2015, alpha = beta = empty cost = 1): task 1 aligns [0, 12) with [0, 10), positional
    # dissimilarity ((0 + 2) / (12 + 10))^2, one unit per annotator; task 2's one LOC stands alone, Δ∅ = 1 over half a
    # unit per annotator: disorder 2. Each task's gamma is 1 - disorder / the project's expected disorder.
    spans = state.controls["label"].spans
    expected = spans.expected.value
    assert spans.scored[1].disorder / spans.scored[1].weight == pytest.approx((2 / 22) ** 2)
    assert spans.scored[2].disorder / spans.scored[2].weight == pytest.approx(2.0)
    assert scores[1].controls["label"]["gamma"] == pytest.approx(1 - (2 / 22) ** 2 / expected, abs=1e-6)
    assert scores[2].controls["label"]["gamma"] == pytest.approx(1 - 2.0 / expected, abs=1e-6)
    assert [t for t, score in scores.items() if score.flagged] == [2] and flagged["gamma"] == 1
    assert scores[2].reasons == (f"label: 0 of 1 span matched (gamma {1 - 2.0 / expected:.2f} below 0.50)",)
    from plugin.state.blocks import task_score
    block = state.blocks([1], updated_at="now")[1]
    assert task_score(block) == round(block["controls"]["label"]["gamma"], 3)
    assert "flag_on" not in _state(tasks, span_flag_on="items").task_scores()[1].controls["label"]


def test_sync_text_names_f1_and_gamma_of_span_controls(capsys):
    assert main(["sync", "--export", str(SPANS / "krippendorff2004.json"), "--label-config",
                 str(SPANS / "krippendorff2004_config.xml")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ("label: pairwise F1 0.444 exact, 0.667 with overlap (Jaccard >= 0.50), mean over 1 annotator pairs; "
            "unitizing alpha 0.859, u-alpha 0.591.") in lines
    assert sum(line.startswith("label: gamma ") for line in lines) == 1


def test_tasks_removed_leave_the_live_f1_as_a_batch_of_the_rest():
    tasks = read_export(SPANS / "leoka_team_2.json")[:20]
    controls = parse_label_config((SPANS / "leoka_config.xml").read_text())
    live = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    live.live_summary()
    removed = random.Random(0).sample([t["id"] for t in tasks], 5)
    for task in removed:
        live.remove_task(task)
    batch = ProjectState.from_tasks([t for t in tasks if t["id"] not in removed], controls, mapping=MappingOptions(),
                                    scoring=ScoringOptions())
    assert live.live_summary()["label"]["f1"] == batch.live_summary()["label"]["f1"]
    spans = batch.scores().controls["label"].spans["f1"]
    assert batch.live_summary()["label"]["f1"] == {"exact": spans["exact"]["mean"], "overlap": spans["overlap"]["mean"]}


def test_changed_tasks_past_half_the_project_are_found_by_a_scan_with_the_same_live_f1(monkeypatch):
    """Past half the tasks changed, the set of changed tasks gives way to a scan of every task: the live F1 is the
    batch's all the same, before and after the scan, and the set starts again empty."""
    monkeypatch.setattr("plugin.state.spans._RESCAN_FROM", 2)
    tasks = read_export(SPANS / "leoka_team_2.json")[:20]
    controls = parse_label_config((SPANS / "leoka_config.xml").read_text())
    live = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    spans = live.controls["label"].spans
    assert spans.rescan and not spans.dirty  # a full read: every task changed
    live.live_summary()
    assert not spans.rescan and not spans.dirty
    live.set_task({**tasks[0], "annotations": tasks[0]["annotations"][:-1]})
    assert spans.dirty == {tasks[0]["id"]} and not spans.rescan
    changed = [{**task, "annotations": task["annotations"][:-1]} for task in tasks[:12]]
    for task in changed:
        live.set_task(task)
    assert spans.rescan and not spans.dirty
    batch = ProjectState.from_tasks([*changed, *tasks[12:]], controls, mapping=MappingOptions(),
                                    scoring=ScoringOptions())
    assert live.live_summary()["label"]["f1"] == batch.live_summary()["label"]["f1"]  # found by the scan
    spans_f1 = batch.scores().controls["label"].spans["f1"]
    assert live.live_summary()["label"]["f1"] == {"exact": spans_f1["exact"]["mean"],
                                                  "overlap": spans_f1["overlap"]["mean"]}
    assert not spans.rescan and not spans.dirty
    for task in tasks[:12]:  # back as they were: past half again, then every task scored at once
        live.set_task(task)
    assert spans.rescan
    live.task_scores()
    assert not spans.rescan and not spans.dirty and all(t in spans.scored for t in spans.tasks if spans._submitted(t))


def test_a_task_read_again_unchanged_keeps_its_scores_and_the_expected_disorder():
    tasks = [_task(1, {1: [(0, 12, "PER")], 2: [(0, 10, "PER")]}), _task(2, {1: [(21, 26, "LOC")], 2: []})]
    state = _state(tasks)
    first = state.task_scores()
    spans = state.controls["label"].spans
    version, scored = spans.version, dict(spans.scored)
    state.load(tasks)  # a pass reads every task again
    assert spans.version == version and spans.scored == scored and state.task_scores() == first
    state.set_task(_task(2, {1: [(21, 26, "LOC")], 2: [(21, 26, "LOC")]}))
    assert spans.version == version + 1 and 2 not in spans.scored and 1 in spans.scored
    assert state.task_scores([2])[2].controls["label"]["f1"] == 1.0


def test_a_snapshot_keeps_the_expected_disorder_of_the_last_pass():
    # the report's snapshot is taken under the service's lock: it must not spend seconds sampling
    tasks = [_task(1, {1: [(0, 12, "PER")], 2: [(0, 10, "PER")]}), _task(2, {1: [(21, 26, "LOC")], 2: []})]
    offline = _state(tasks)
    assert offline.snapshot().expected["label"] is offline.controls["label"].spans.expected  # none yet: sampled
    state = _state(tasks)
    state.task_scores()  # a pass
    held = state.controls["label"].spans.expected
    state.set_task(_task(2, {1: [(21, 26, "LOC")], 2: [(20, 26, "LOC")]}))
    snapshot = state.snapshot()
    assert state.controls["label"].spans.expected is held and snapshot.expected["label"] is held
    assert snapshot.tasks[2].controls["label"]["gamma"] == round(state.controls["label"].spans.scored[2].gamma(held.value), 6)
    state.task_scores()  # the next pass samples again
    assert state.controls["label"].spans.expected is not held


def test_the_project_observed_disorder_sums_the_tasks_held_alignments(bratiaa):
    """The project's gamma takes its observed disorder from every task's best alignment, held since the task was
    scored, rather than aligning every task again: it equals the disorder of one alignment of the whole corpus."""
    from agreement.gamma import observed_disorder
    from plugin.mapping.span_units import span_units

    state = bratiaa[2]
    snapshot = state.snapshot()
    mapped = snapshot.mapped["label"]
    again = observed_disorder(span_units(mapped, lengths=mapped.lengths)).value
    assert snapshot.observed["label"] == pytest.approx(again, rel=1e-12)
    assert snapshot.scores().controls["label"].spans["gamma"]["observed"] == round(again, 6)


def test_a_first_full_scoring_hands_its_units_and_matches_to_the_project_scores(bratiaa):
    """A cold snapshot scores every task at once, then reuses those units and span matches for the project's
    measures: the same scores as a snapshot of tasks already scored, which builds them again."""
    tasks, controls, _, _, _ = bratiaa
    cold = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    handed = cold.snapshot()
    assert set(handed.span_f1["label"]) == {"exact", "overlap"}
    warm = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    warm.task_scores()  # a pass: the snapshot after it has every task scored, and nothing to hand over
    again = warm.snapshot()
    assert again.span_f1 == {}
    assert handed.mapped["label"].units.n_units == again.mapped["label"].units.n_units > 0
    assert handed.scores().controls["label"].spans == again.scores().controls["label"].spans
    # a task changed after the scoring that built them: the units are built again, as the tasks are now
    built = {}
    fresh = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    fresh.task_scores(built=built)
    assert built["label"].tasks == sorted(fresh.controls["label"].spans.tasks)
    fresh.remove_task(tasks[0]["id"])
    assert fresh.mapped(span_rows=False, built=built)["label"].units.n_units < built["label"].units.n_units


def test_tasks_scored_in_blocks_of_spans_score_as_all_at_once(bratiaa, monkeypatch):
    """A large project's tasks are scored a block of at most SPANS_AT_ONCE spans at a time: each task's measures,
    the running per-pair sums and the project's scores are those of scoring every task at once."""
    from plugin.state import spans as span_state

    tasks, controls, _, _, _ = bratiaa
    at_once = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    whole = at_once.snapshot()
    monkeypatch.setattr(span_state, "SPANS_AT_ONCE", 7)
    blocks = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    spans = blocks.controls["label"].spans
    assert len(spans._blocks(sorted(spans.tasks))) > 2
    parts = blocks.snapshot()
    assert parts.span_f1 == {}  # no one call built every task's units: the project's measures build them
    assert spans.scored == at_once.controls["label"].spans.scored and spans.sums == at_once.controls["label"].spans.sums
    assert parts.tasks == whole.tasks
    assert parts.scores().controls["label"].spans == whole.scores().controls["label"].spans
    # the live summary of a project just read scores its tasks a block at a time too
    live = ProjectState.from_tasks(tasks, controls, mapping=MappingOptions(), scoring=ScoringOptions())
    assert live.controls["label"].spans.live_f1(MappingOptions(), ScoringOptions()) == (
        at_once.controls["label"].spans.live_f1(MappingOptions(), ScoringOptions()))
    assert live.controls["label"].spans.sums == at_once.controls["label"].spans.sums


def test_the_matched_spans_of_every_task_at_once_are_each_task_s_pair_counts_summed():
    # what a flagged span task's reason says ("2 of 3 spans matched"), read for every task in one pass
    tasks = [_task(1, {1: [(0, 12, "PER"), (21, 26, "LOC")], 2: [(0, 12, "PER")], 3: [(0, 10, "PER")]}),
             _task(2, {1: [(21, 26, "LOC")], 2: []}), _task(3, {1: [(0, 12, "PER")], 2: [(0, 12, "ORG")]})]
    state = _state(tasks)
    state.task_scores()
    scored = state.controls["label"].spans.scored
    for match in ("exact", "overlap"):
        by_hand = [[2 * sum(tp for tp, _ in scored[t].pairs[match].values()),
                    sum(n for _, n in scored[t].pairs[match].values()), len(scored[t].pairs[match])]
                   for t in (1, 2, 3)]
        assert scored.matched([1, 2, 3], match).tolist() == by_hand
    # task 1: pair 1-2 matches PER (2 of 3 spans), 1-3 (2 of 3) and 2-3 (2 of 2) by overlap alone ([0, 10) is 10/12
    # of [0, 12)): 6 of 8 spans; exactly, only 1-2's
    assert scored.matched([1], "overlap").tolist() == [[6, 8, 3]]
    assert scored.matched([1], "exact").tolist() == [[2, 8, 3]]
    assert scored.matched([], "exact").shape == (0, 3)


def test_a_task_whose_spans_too_many_annotators_share_is_left_out_of_gamma_with_a_note():
    """Twenty annotators marking one span would need 2^20 candidate groups to align exactly: that task has no gamma
    and the project's observed disorder is that of the other tasks, said in the scores, the summary and the report
    (rather than the machine's memory taken: 30 annotators once asked for gigabytes)."""
    from plugin.report.tables import build_report
    from plugin.state.scoring import span_scores
    from plugin.summary import _span_lines

    crowd = _task(1, {who: [(0, 12, "PER")] for who in range(1, 21)})
    rest = [_task(2, {1: [(0, 12, "PER")], 2: [(0, 10, "PER")], 3: [(21, 26, "LOC")]}),
            _task(3, {1: [(21, 26, "LOC")], 2: [(21, 26, "LOC")], 3: [(21, 26, "ORG")]})]
    state, without = _state([crowd, *rest]), _state(rest)
    snapshot = state.snapshot()
    assert snapshot.unaligned == {"label": 1}
    assert snapshot.observed["label"] == pytest.approx(without.snapshot().observed["label"], rel=1e-12)
    spans = snapshot.scores().controls["label"].spans
    assert spans["gamma"]["n_unaligned_tasks"] == 1 and spans["gamma"]["value"] is not None
    assert spans["gamma"]["value"] == without.scores().controls["label"].spans["gamma"]["value"]  # D_e too
    mapped = snapshot.mapped["label"]
    assert span_scores(mapped, ScoringOptions())["gamma"]["n_unaligned_tasks"] == 1  # aligned there, not held
    tasks = state.task_scores()
    assert tasks[1].controls["label"]["gamma"] is None
    assert all(tasks[t].controls["label"]["gamma"] is not None for t in (2, 3))
    note = ("leaves out 1 task: units there overlap among too many annotators to align exactly (over 65,536 "
            "candidate groups)")
    assert _span_lines("label", spans)[1].endswith(f"; it {note}.")
    measures = build_report(snapshot, source="t", generated_at="now").span_measures.set_index("measure")
    assert measures.loc["gamma", "caveat"] == note
    live = _state([])
    for task in (rest[0], crowd, rest[1]):
        live.set_task(task)
        live.task_scores([task["id"]])
    assert _canonical(live) == _canonical(state)
    assert live.snapshot().unaligned == {"label": 1}
