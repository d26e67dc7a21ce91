"""``sync`` and ``report`` with a state directory, against an in-memory Label Studio: a sync (a report) restores the
state the last one saved and reads only the tasks changed since; a file it cannot use, a full read asked for, a dry
run, a failed save."""

import pandas as pd
import pytest

from plugin.cli import main
from plugin.keeper.sync import monitor_report, read_project, sync_project
from plugin.report import project_report
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions
from plugin.state.project import ProjectState
from plugin.state.saved import StateFiles, state_path
from plugin.summary import saved_state_lines, summary_text, sync_summary
from tests.plugin.fake_label_studio import CONTROLS, SECRET, FakeLabelStudio, annotation

SCORING = ScoringOptions(n_resamples=50)


@pytest.fixture
def fake():
    return FakeLabelStudio([{"id": t, "meta": {}, "annotations": [
        annotation(2 * t, t, 1, "pos"), annotation(2 * t + 1, t, 2, "neg" if t % 3 else "pos")]} for t in range(1, 31)])


def files(directory, secret=SECRET):
    return StateFiles(directory, secret=secret, source="http://ls.test")


def sync(fake, state, **options):
    fake.reads.clear()
    report = sync_project(fake, 1, None, mapping=MappingOptions(), scoring=SCORING,
                          retry_delays=(0.01,), state=state, **options)
    return report, summary_text(sync_summary("Project 1", report.scores, SCORING, dry_run=options.get("dry_run", False),
                                             to_write=report.tasks_to_write, report=report))


def in_label_studio(fake):
    """The project as a full read of Label Studio scores it now."""
    return ProjectState.from_tasks(fake.tasks(1), CONTROLS, mapping=MappingOptions(), scoring=SCORING)


def test_a_sync_restores_the_last_one_s_state_and_reads_only_the_tasks_changed_since(fake, tmp_path):
    first, text = sync(fake, files(tmp_path))
    assert fake.reads[0] == ("all", 30) and first.read == {"kind": "full", "n_tasks": 30}
    assert first.tasks_written == 30 and "missing" in first.saved_state
    assert first.saved_state["saved"]["n_tasks"] == 30
    assert first.saved_state["saved"]["bytes"] == state_path(tmp_path, 1).stat().st_size
    assert "Read every task: no saved state yet." in text and "Saved the project's state (30 tasks," in text

    again, text = sync(fake, files(tmp_path))  # reads back what the first wrote (changed since its read)
    assert again.read["kind"] == "changed" and again.saved_state["restored"]["n_tasks"] == 30
    assert again.tasks_written == 0 and in_label_studio(fake).stale_tasks() == []

    fake.annotate(7, annotation(99, 7, 3, "neu"))
    stale = in_label_studio(fake).stale_tasks()  # what a sync reading every task writes: task 7 alone (the others'
    assert stale == [7]  # alphas moved with the project's expected disagreement: a drift that is no change)
    third, text = sync(fake, files(tmp_path))
    assert fake.reads[0][0] == "changed" and fake.reads[0][1] <= 2, fake.reads  # task 7, and the newest again
    # the saved state holds each task's stamp: only task 7 is read in full
    assert third.read == {"kind": "changed", "n_tasks": 1}
    assert "Read 1 tasks changed since the saved state of" in text and "(30 tasks restored)" in text
    assert third.tasks_written == len(stale) and fake.meta(7)["agreement"]["n_annotations"] == 3
    batch = in_label_studio(fake)
    assert batch.stale_tasks() == []  # every block in Label Studio, task 7's too, as a full read computes it
    assert third.scores.tasks == batch.scores().tasks  # the whole project is reported, not only what was read
    assert third.scores.controls["sentiment"].summary() == batch.scores().controls["sentiment"].summary()


def test_a_full_read_reads_every_task_and_saves_the_state_again(fake, tmp_path):
    sync(fake, files(tmp_path))
    saved_at = state_path(tmp_path, 1).stat().st_mtime_ns
    fake.annotate(7, annotation(99, 7, 3, "neu"))
    stale = in_label_studio(fake).stale_tasks()
    report, text = sync(fake, files(tmp_path), full_read=True)
    assert fake.reads[0] == ("all", 30) and report.read == {"kind": "full", "n_tasks": 30}
    assert set(report.saved_state) == {"not used", "saved"} and state_path(tmp_path, 1).stat().st_mtime_ns > saved_at
    assert "Read every task: a full read was asked (--full-read)." in text
    assert "Saved the project's state (30 tasks," in text
    assert report.tasks_written == len(stale) and in_label_studio(fake).stale_tasks() == []


def test_a_state_signed_with_another_secret_is_refused_and_every_task_is_read(fake, tmp_path):
    sync(fake, files(tmp_path))
    report, text = sync(fake, files(tmp_path, secret="another-s3cret-Secret"))
    assert fake.reads[0] == ("all", 30) and report.read["kind"] == "full"
    assert "not signed with this service's secret" in report.saved_state["refused"]["reason"]
    assert "Read every task: the saved state was not used (" in text
    assert SECRET not in repr(files(tmp_path))
    assert "saved" in report.saved_state  # saved again, signed with the secret in use


def test_a_task_deleted_while_no_sync_ran_takes_a_full_read(fake, tmp_path):
    sync(fake, files(tmp_path))
    del fake.store[30]
    report, text = sync(fake, files(tmp_path))
    assert [kind for kind, _ in fake.reads] == ["changed", "changed", "all"] and fake.reads[-1] == ("all", 29)
    # the listings' tasks are held as they are (the saved state's stamps): only the full read reads in full
    assert report.read == {"kind": "full", "n_tasks": 29}
    assert "restored" in report.saved_state
    assert (f"Read every task ({report.read['n_tasks']} tasks read): a saved state was restored, but the project's "
            "task count differed from it (tasks deleted since)." in text)
    assert len(report.scores.tasks) == 29 and in_label_studio(fake).stale_tasks() == []


def test_tasks_created_since_the_state_was_read_are_read_as_changed_not_every_task(fake, tmp_path):
    sync(fake, files(tmp_path))
    sync(fake, files(tmp_path))  # reads back what the first wrote
    for task in (31, 32):  # imported since
        fake.add_task({"id": task, "meta": {}, "annotations": [annotation(2 * task, task, 1, "pos"),
                                                               annotation(2 * task + 1, task, 2, "neg")]})
    report, text = sync(fake, files(tmp_path))
    assert [kind for kind, _ in fake.reads] == ["changed"] and 2 <= fake.reads[0][1] <= 4  # listed: the newest too
    assert report.read == {"kind": "changed", "n_tasks": 2}  # read in full: the two new ones alone
    assert "Read 2 tasks changed since the saved state of " in text
    assert len(report.scores.tasks) == 32 and in_label_studio(fake).stale_tasks() == []
    assert report.scores.tasks == in_label_studio(fake).scores().tasks


def test_a_task_created_after_the_first_page_of_changed_tasks_waits_for_the_next_read_not_a_full_one(fake, tmp_path):
    # The task count is the first page's (no request of its own): a task created after that page is neither
    # counted nor read, so the read finds the count as it was, and the next read of changed tasks reads the task.
    sync(fake, files(tmp_path))
    sync(fake, files(tmp_path))
    read = fake.tasks

    def read_then_import(project, **options):
        found = read(project, **options)
        if 31 not in fake.store:  # after the page was served
            fake.add_task({"id": 31, "meta": {}, "annotations": [annotation(62, 31, 1, "pos")]})
        return found

    fake.tasks = read_then_import
    fake.calls.clear()
    report, _ = sync(fake, files(tmp_path))
    assert [kind for kind, _ in fake.reads] == ["changed"] and report.read["kind"] == "changed"
    assert len(report.scores.tasks) == 30 and fake.calls["task_count"] == 0
    report, _ = sync(fake, files(tmp_path))
    assert [kind for kind, _ in fake.reads] == ["changed"] and report.read["kind"] == "changed"
    assert len(report.scores.tasks) == 31 and in_label_studio(fake).stale_tasks() == []


def test_a_state_saved_with_other_options_is_refused_and_replaced(fake, tmp_path):
    sync(fake, files(tmp_path))
    fake.reads.clear()
    other = ScoringOptions(n_resamples=50, threshold=0.25)
    report = sync_project(fake, 1, None, mapping=MappingOptions(), scoring=other, retry_delays=(0.01,),
                          state=files(tmp_path))
    assert fake.reads[0] == ("all", 30) and report.read["kind"] == "full"
    assert report.saved_state["refused"]["reason"] == ("The saved state was mapped with another label config or "
                                                       "other options.")
    assert report.saved_state["saved"]["n_tasks"] == 30
    fake.reads.clear()
    again = sync_project(fake, 1, None, mapping=MappingOptions(), scoring=other, retry_delays=(0.01,),
                         state=files(tmp_path))
    assert again.read["kind"] == "changed" and "refused" not in again.saved_state


def test_a_dry_run_reads_from_the_saved_state_and_saves_nothing(fake, tmp_path):
    sync(fake, files(tmp_path))
    before = state_path(tmp_path, 1).read_bytes()
    fake.annotate(7, annotation(99, 7, 3, "neu"))
    writes = len(fake.writes)
    report, text = sync(fake, files(tmp_path), dry_run=True)
    assert report.read["kind"] == "changed" and len(fake.writes) == writes
    assert report.tasks_to_write == len(in_label_studio(fake).stale_tasks()) > 0
    assert "saved" not in report.saved_state and state_path(tmp_path, 1).read_bytes() == before
    assert "tasks changed since the saved state of" in text and "Saved the project's state" not in text


def test_a_state_that_cannot_be_saved_is_said_and_the_sync_s_writes_stand(fake, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    report, text = sync(fake, files(blocked))
    assert report.tasks_written == 30 and "failed" in report.saved_state
    assert "The project's state was not saved (" in text and in_label_studio(fake).stale_tasks() == []


def test_a_state_directory_needs_the_webhook_secret_and_a_live_project(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k")
    monkeypatch.delenv("AGREEMENT_WEBHOOK_SECRET", raising=False)
    assert main(["sync", "--project", "1", "--state-dir", str(tmp_path), "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert error == ("ls-agreement sync: error: A state directory's files are signed with the webhook secret: Set "
                     "AGREEMENT_WEBHOOK_SECRET to a shared secret of at least 16 characters.")
    assert main(["sync", "--project", "1", "--full-read", "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == ("ls-agreement sync: error: --full-read is for a sync with --state-dir "
                                               "(without it, every sync reads every task).")
    export = tmp_path / "export.json"
    export.write_text("[]")
    for command in (["sync"], ["report", "--out", str(tmp_path / "r.html")]):
        assert main([*command, "--export", str(export), "--state-dir", str(tmp_path), "--quiet"]) == 2
        assert capsys.readouterr().err.strip() == (f"ls-agreement {command[0]}: error: --state-dir is for a live "
                                                   "project (--project), not --export.")
    monkeypatch.setenv("AGREEMENT_STATE_DIR", str(tmp_path))  # serve's: sync and report take only the flag
    assert main(["sync", "--export", str(export), "--quiet"]) == 0
    assert not any(tmp_path.glob("*.state"))


def test_a_report_reads_from_the_saved_state_writes_nothing_to_label_studio_and_saves_the_state(fake, tmp_path):
    first = read_project(fake, 1, mapping=MappingOptions(), scoring=SCORING, state=files(tmp_path))
    assert first.last_pass().kind == "full" and first.saved_state()["saved"]["n_tasks"] == 30
    fake.annotate(7, annotation(99, 7, 3, "neu"))
    fake.reads.clear()
    second = read_project(fake, 1, mapping=MappingOptions(), scoring=SCORING, state=files(tmp_path))
    read = second.last_pass()
    assert read.kind == "changed" and fake.reads[0][0] == "changed" and fake.reads[0][1] <= 2
    assert read.n_listed == fake.reads[0][1] and read.n_tasks == 1  # task 7 alone read in full
    assert fake.writes == [] and second.saved_state()["saved"]["n_tasks"] == 30
    report = monitor_report(fake, second, "http://ls.test")
    batch = project_report(in_label_studio(fake).snapshot(), project=1, url="http://ls.test",
                           generated_at=report.generated_at, people=fake.users())
    pd.testing.assert_frame_equal(report.tasks, batch.tasks)  # every task, as a full read reports them
    pd.testing.assert_frame_equal(report.headline, batch.headline)
    lines = saved_state_lines({"kind": read.kind, "n_tasks": read.n_tasks}, second.saved_state())
    assert lines[0].startswith(f"Read {read.n_tasks} tasks changed since the saved state of ")
    assert lines[1].startswith("Saved the project's state (30 tasks, ")


def _consensus_predictions(fake):
    return {t["id"]: [p for p in t.get("predictions", []) if p["model_version"] == "consensus"]
            for t in fake.tasks(1)}


def test_consensus_predictions_are_created_once_kept_in_step_and_deleted_when_a_task_has_no_consensus(fake):
    review = ReviewOptions(tab=False, consensus_predictions=True)
    report, text = sync(fake, None, review=review)
    held = _consensus_predictions(fake)
    assert all(len(found) == 1 for found in held.values()) and len(held) == 30
    sentiment = [r for r in held[3][0]["result"] if r["from_name"] == "sentiment"]
    assert sentiment[0]["value"]["choices"] == [report.scores.tasks[3].controls["sentiment"]["consensus"]["label"]]
    assert "sentiment: consensus by Dawid-Skene over 30 items" in text
    writes = fake.prediction_writes
    again, _ = sync(fake, None, review=review)  # nothing changed: nothing written, nothing duplicated
    assert fake.prediction_writes == writes and _consensus_predictions(fake) == held
    assert not any(m.startswith("ref:model") for c in again.scores.controls.values()
                   for m in ((c.references or {}).get("models") or {}))
    fake.annotate(4, annotation(900, 4, 1, "neu"))
    fake.annotate(4, annotation(901, 4, 2, "neu"))
    fake.annotate(4, annotation(902, 4, 3, "neu"))
    sync(fake, None, review=review)
    task_4 = _consensus_predictions(fake)[4]
    assert len(task_4) == 1 and task_4[0]["id"] == held[4][0]["id"]  # updated in place
    assert [r["value"]["choices"] for r in task_4[0]["result"] if r["from_name"] == "sentiment"] == [["neu"]]
    with fake.lock:
        fake.store[5]["annotations"] = []
        fake._touch(5)
    sync(fake, None, review=review)
    assert _consensus_predictions(fake)[5] == []


def test_without_the_option_no_prediction_is_written(fake):
    sync(fake, None)
    assert not hasattr(fake, "prediction_writes") and all(v == [] for v in _consensus_predictions(fake).values())


def test_the_summary_states_the_whole_flag_rule(fake, tmp_path):
    report, text = sync(fake, files(tmp_path))
    summary = sync_summary("Project 1", report.scores, SCORING, dry_run=False, to_write=0, report=report)
    assert summary["flag_rule"] == ("a task with two annotations or more is flagged when a control's agreement on it "
                                    f"is below its threshold ({SCORING.threshold:.2f})")
    assert f"Flagged {summary['flagged']} tasks ({summary['flag_rule']})." in text
