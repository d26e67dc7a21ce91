"""``ls-agreement sync`` on an export file (offline) and its errors."""

import io
import json
import re

import pytest

from plugin.cli import main
from plugin.mapping.annotations import GROUND_TRUTH_SKIP
from tests.plugin.conftest import DATA


@pytest.fixture
def export(tmp_path, recorded):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(recorded["tasks"]))
    config = tmp_path / "config.xml"
    config.write_text(recorded["label_config"])
    return path, config


def test_export_with_config(export, capsys):
    path, config = export
    assert main(["sync", "--export", str(path), "--label-config", str(config), "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_tasks"] == 3 and summary["n_annotations"] == 6 and summary["n_annotators"] == 3
    assert summary["controls"]["sentiment"]["spa"] == pytest.approx(1 / 3)
    assert summary["dry_run"] and summary["tasks_written"] == 0 and summary["tasks_to_write"] == 2
    assert summary["skipped"] == {"skipped (cancelled) annotation": 1,
                                  GROUND_TRUTH_SKIP: 1}


def test_export_without_config_infers_the_controls(export, capsys):
    path, _ = export
    assert main(["sync", "--export", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "sentiment" in out and "Flagged" in out and "Dry run: 2 tasks would be written." in out
    assert "pass --include-ground-truth" in out


@pytest.mark.parametrize(("args", "message"), [
    (["sync"], "Give either --project ID"),
    (["sync", "--project", "1", "--url", "ftp://x", "--api-key", "k"], "must start with http"),
    (["sync", "--export", "missing.json"], "does not exist"),
    (["sync", "--export", str(DATA / "record_tasks.py")], "is not a JSON export"),
])
def test_errors_are_one_line(args, message, capsys, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_missing_url_names_the_variable(capsys, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    assert main(["sync", "--project", "1"]) == 2
    assert "set LABEL_STUDIO_URL" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "env", "message"), [
    ([], "", "Name the projects to monitor"),
    (["--project", "all", "--project", "3"], "", "either --project all or project ids"),
    (["--project", "3x"], "", "positive whole numbers, or 'all'; got 3x"),
    ([], "1, -2", "got 1, -2"),
    (["--project", "all", "--shard", "3/2"], "", "1 <= K <= N (e.g. 1/2); got '3/2'"),
    (["--project", "all", "--shard", "half"], "", "two whole numbers"),
    (["--project", "2", "--project", "4", "--shard", "1/2"], "",
     "None of the projects named (2, 4) belongs to shard 1/2, which owns the ids 1, 3, 5"),
])
def test_serve_refuses_bad_project_lists_in_one_line(args, env, message, capsys, monkeypatch):
    monkeypatch.setenv("AGREEMENT_WEBHOOK_SECRET", "a-Strong-secret-for-tests-9")
    monkeypatch.setenv("AGREEMENT_PROJECTS", env)
    monkeypatch.setenv("LABEL_STUDIO_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k")
    assert main(["serve", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_settings_file_wins_over_the_flags(export, capsys, tmp_path):
    path, config = export
    flags = ["sync", "--export", str(path), "--label-config", str(config), "--json", "--quiet"]
    settings = tmp_path / "settings.yaml"
    flagged = {}
    for threshold in (0.0, 1.0):
        settings.write_text(f"threshold: {threshold}\n")
        assert main([*flags, "--threshold", "0.5", "--settings", str(settings)]) == 0
        summary = json.loads(capsys.readouterr().out)
        flagged[threshold] = (summary["threshold"], summary["flagged"])
    assert flagged[0.0][0] == 0.0 and flagged[1.0][0] == 1.0  # the file, not --threshold 0.5


def test_serve_refuses_a_bad_settings_file_in_one_line(capsys, monkeypatch, tmp_path):
    settings = tmp_path / "settings.toml"
    settings.write_text("[projects.2]\nthreshold = 2\n")
    monkeypatch.setenv("AGREEMENT_WEBHOOK_SECRET", "a-Strong-secret-for-tests-9")
    monkeypatch.setenv("AGREEMENT_SETTINGS", str(settings))
    assert main(["serve", "--project", "2", "--url", "http://127.0.0.1:9", "--api-key", "k"]) == 2
    err = capsys.readouterr().err
    assert "project 2: The threshold (--threshold) must lie between 0 and 1" in err and err.count("\n") == 1


def test_a_command_run_as_a_program_freezes_its_startup_objects_and_a_call_does_not(export, capsys):
    # ls-agreement as its own process leaves its imports out of the garbage collector's passes before it reads
    # (plugin.keeper.memory.freeze_startup_objects); a caller passing arguments keeps its process as it was
    import subprocess
    import sys

    path, config = export
    args = ["sync", "--export", str(path), "--label-config", str(config), "--json", "--quiet"]
    program = ("import gc, sys; from plugin.cli import main; sys.argv = ['ls-agreement', *sys.argv[1:]]; "
               "status = main(); print(gc.get_freeze_count(), file=sys.stderr); sys.exit(status)")
    done = subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0 and json.loads(done.stdout)["n_tasks"] == 3
    assert int(done.stderr.split()[-1]) > 50_000  # numpy, pandas, SciPy and the SDK's objects
    import gc

    frozen = gc.get_freeze_count()
    assert main(args) == 0 and json.loads(capsys.readouterr().out)["n_tasks"] == 3
    assert gc.get_freeze_count() == frozen


def test_the_progress_bars_count_changed_tasks_and_start_again_for_a_full_read_after():
    """A read of changed tasks does not know their number (a counter, closed when it ends); a full read after it (tasks
    deleted) gets a bar of its own, as does each stage that starts again."""
    from plugin.cli import _progress_bar

    out = io.StringIO()
    progress = _progress_bar(out, quiet=False)
    for done in (1, 2, 3):
        progress("fetch changed", done, 0)
    progress("fetch changed", 3, 3)
    for done in (1, 2, 4):
        progress("fetch", done, 4)
    for done in (1, 2):
        progress("fetch", done, 2)
    text = out.getvalue()
    assert "reading changed tasks: 0task [" in text  # a counter: no total, no percentage
    assert len(re.findall(r"reading changed tasks: 100%\|[^|]*\| 3/3", text)) == 1, text
    assert len(re.findall(r"reading tasks: 100%\|[^|]*\| 4/4", text)) == 1, text
    assert len(re.findall(r"reading tasks: 100%\|[^|]*\| 2/2", text)) == 1, text
    assert _progress_bar(out, quiet=True) is None


@pytest.mark.parametrize("columns", [250, 80])
def test_a_progress_bar_fits_100_columns_even_in_a_wider_terminal(columns, monkeypatch):
    from plugin.cli import _progress_bar

    monkeypatch.setenv("COLUMNS", str(columns))
    out = io.StringIO()
    progress = _progress_bar(out, quiet=False)
    progress("fetch changed", 123_456, 0)
    progress("fetch changed", 123_456, 123_456)
    for done in (0, 60_000, 123_456):
        progress("fetch", done, 123_456)
    lines = [line for line in re.split(r"[\r\n]", out.getvalue()) if line]
    assert max(len(line) for line in lines) == min(columns, 100)  # a bar fills its width, and no more


@pytest.mark.parametrize(("out", "fmt", "message"), [
    ("missing-folder/report.html", "html", "the folder"),
    (".", "html", "it is a folder; name a file"),
    ("export.json", "csv", "it is a file, and CSV writes a folder"),
])
def test_a_report_that_cannot_be_written_is_refused_before_anything_is_read(export, capsys, monkeypatch, out, fmt,
                                                                             message):
    # before, the whole project was read and scored (an hour on a large one) and then the write failed
    path, config = export
    monkeypatch.chdir(path.parent)
    read = []
    monkeypatch.setattr("plugin.cli._read_export", lambda args: read.append(args) or (None, None))
    assert main(["report", "--export", str(path), "--label-config", str(config), "--out", out, "--format", fmt,
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and read == []


def test_report_offers_no_option_of_writing_to_label_studio(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    text = capsys.readouterr().out
    assert "--writers" not in text and "--no-tab" not in text and "--url" in text
    with pytest.raises(SystemExit):
        main(["sync", "--help"])
    assert "--writers" in capsys.readouterr().out
