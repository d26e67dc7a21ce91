"""Program errors told apart from the user's mistakes: a bug in one control costs no other control or task, and a
bug that stops a command says so in one line, keeps its traceback and exits 70."""

import json
import logging
import tempfile

import pytest

import plugin.keeper.sync
from plugin.bugs import EX_SOFTWARE, Bug, InputError, contained, keep_bug
from plugin.cli import main
from plugin.keeper.sync import sync_project
from plugin.report import build_report, report_json
from plugin.settings import MappingOptions, ScoringOptions, SettingsError
from plugin.state.control import ControlState
from plugin.state.project import ProjectState
from plugin.summary import summary_text, sync_summary
from tests.plugin.fake_label_studio import CONFIG, CONTROLS, FakeLabelStudio

SCORING = ScoringOptions(n_resamples=20)


@pytest.fixture(autouse=True)
def bug_folder(tmp_path, monkeypatch):
    """Bugs' tracebacks go to this test's folder, not the machine's temporary folder."""
    folder = tmp_path / "bugs"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def rated(identifier, task, annotator, choice, stars):
    return {"id": identifier, "task": task, "completed_by": annotator, "was_cancelled": False,
            "updated_at": "2026-01-01T00:00:00Z",
            "result": [{"from_name": "sentiment", "to_name": "text", "type": "choices",
                        "value": {"choices": [choice]}},
                       {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": stars}}]}


def tasks():
    return [{"id": t, "meta": {"keep": t}, "data": {"text": f"review {t}"},
             "annotations": [rated(2 * t, t, 1, "pos", 1 + t % 4), rated(2 * t + 1, t, 2, "neg" if t % 3 else "pos",
                                                                        1 + (t + t % 2) % 4)]}
            for t in range(1, 13)]


@pytest.fixture
def broken_sentiment(monkeypatch):
    """Scoring the control ``sentiment`` raises, as a bug would; every other control scores as usual."""
    original = ControlState.task_scores

    def task_scores(self, *args, **kwargs):
        if self.control.name == "sentiment":
            raise ZeroDivisionError("injected into sentiment")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ControlState, "task_scores", task_scores)


def test_a_bug_is_kept_with_its_traceback_in_one_file_per_place(bug_folder, caplog):
    def fail():
        return {}["missing"]

    with caplog.at_level(logging.ERROR, logger="plugin.bugs"):
        bugs = [contained(fail, where="scoring Choices 'x'") for _ in range(3)]
    assert all(isinstance(bug, Bug) for bug in bugs) and len({bug.file for bug in bugs}) == 1
    assert list(bug_folder.iterdir()) == [bugs[0].file]  # met at every pass, one file all the same
    kept = bugs[0].file.read_text()
    assert kept.startswith("A bug in ls-agreement while scoring Choices 'x'.") and "KeyError: 'missing'" in kept
    assert "in fail" in kept  # the traceback itself, down to the frame that raised
    assert bugs[0].reason() == (f"a bug in ls-agreement while scoring Choices 'x' (KeyError: 'missing'); its "
                                f"traceback is in {bugs[0].file}")
    assert [record.getMessage() for record in caplog.records] == [bugs[0].reason().capitalize()[:1]
                                                                  + bugs[0].reason()[1:] + "."] * 3
    assert contained(lambda: 7, where="adding") == 7


def test_a_bug_whose_file_cannot_be_written_keeps_its_traceback_in_the_log(tmp_path, caplog):
    try:
        raise RuntimeError("line one\nline two")
    except RuntimeError as error:
        with caplog.at_level(logging.ERROR, logger="plugin.bugs"):
            bug = keep_bug(error, where="reading", folder=tmp_path / "no such folder")
    assert bug.file is None and bug.error == "RuntimeError: line one line two"  # one line
    assert bug.reason().endswith("its traceback is in the log")
    assert caplog.records[0].exc_info is not None


def test_the_user_s_mistakes_are_input_errors():
    assert issubclass(SettingsError, InputError) and issubclass(InputError, ValueError)


def test_a_bug_in_one_control_leaves_every_other_control_and_task_scored_and_written(broken_sentiment):
    fake = FakeLabelStudio(tasks())
    report = sync_project(fake, 1, None, mapping=MappingOptions(), scoring=SCORING, retry_delays=(0.01,))
    assert report.tasks_written == 12 and not report.failures
    for task in range(1, 13):
        block = fake.meta(task)["agreement"]
        assert "sentiment" not in block["controls"] and block["controls"]["quality"]["n_items"] == 1
        assert fake.meta(task)["keep"] == task
    summary = sync_summary("Project 1", report.scores, SCORING, dry_run=False, to_write=report.tasks_to_write,
                           report=report)
    reason = summary["not_scored"]["sentiment"]
    assert reason.startswith("a bug in ls-agreement while scoring Choices 'sentiment' (ZeroDivisionError: injected "
                             "into sentiment); its traceback is in ")
    assert "ZeroDivisionError" in open(reason.rsplit(" ", 1)[1]).read()
    assert "sentiment" not in summary["controls"] and summary["controls"]["quality"]["n_items"] == 12
    assert f"Control 'sentiment' is not scored: {reason}." in summary_text(summary)


def test_a_bug_in_one_control_s_project_scores_or_report_tables_leaves_the_others(monkeypatch):
    state = ProjectState.from_tasks(tasks(), CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    original = plugin.state.snapshot.score_control

    def score_control(mapped, *args, **kwargs):
        if mapped.control.name == "quality":
            raise IndexError("injected into quality")
        return original(mapped, *args, **kwargs)

    monkeypatch.setattr(plugin.state.snapshot, "score_control", score_control)
    snapshot = state.snapshot()
    scores = snapshot.scores()
    assert "quality" not in scores.controls and "sentiment" in scores.controls and "injected into quality" in scores.not_scored["quality"]
    assert scores.tasks[1].controls["quality"]["n_items"] == 1  # the tasks' own scores stand
    report = build_report(snapshot, source="test", generated_at="now", scores=scores)
    notes = report_json(report)["notes"]
    assert {"kind": "not scored", "control": "quality", "message": scores.not_scored["quality"]} in notes
    assert "quality" not in report.headline["control"].tolist()


def test_a_bug_in_one_control_keeps_sync_export_going_with_exit_zero(broken_sentiment, tmp_path, capsys):
    export, config = tmp_path / "export.json", tmp_path / "config.xml"
    export.write_text(json.dumps(tasks()))
    config.write_text(CONFIG)
    assert main(["sync", "--export", str(export), "--label-config", str(config), "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "quality" in summary["controls"] and "sentiment" not in summary["controls"]
    assert "ZeroDivisionError: injected into sentiment" in summary["not_scored"]["sentiment"]


def test_a_bug_that_stops_a_command_says_so_in_one_line_keeps_its_traceback_and_exits_70(monkeypatch, tmp_path,
                                                                                        capsys, bug_folder):
    def score_export(*args, **kwargs):
        raise ValueError("zero-size array to reduction operation maximum which has no identity")

    monkeypatch.setattr(plugin.keeper.sync, "score_export", score_export)
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks()))
    assert main(["sync", "--export", str(export), "--quiet"]) == EX_SOFTWARE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ls-agreement sync: a bug in ls-agreement while running "
                                                   "ls-agreement sync (ValueError: zero-size array")
    [kept] = bug_folder.iterdir()
    assert str(kept) in err and "in score_export" in kept.read_text()


def test_the_user_s_mistake_stays_one_line_and_exit_2(tmp_path, capsys, bug_folder):
    assert main(["sync", "--export", str(tmp_path / "missing.json"), "--quiet"]) == 2
    assert capsys.readouterr().err == f"ls-agreement sync: error: {tmp_path / 'missing.json'} does not exist.\n"
    assert main(["report", "--export", str(tmp_path / "missing.json"), "--out", str(tmp_path / "r.html"),
                 "--quiet"]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and not list(bug_folder.iterdir())
