"""``make screenshots``: the target runs docs/make_screenshots.py, which reads what the demo prints."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plugin.demo import live_report_text, progress_lines

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "make_screenshots.py"


def script():
    spec = importlib.util.spec_from_file_location("make_screenshots", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_the_target_runs_the_script():
    # -n: the commands, none run (the venvs and Chromium it needs first are other targets)
    shown = subprocess.run(["make", "-n", "screenshots"], cwd=ROOT, capture_output=True, text=True, check=True)
    # the script's line (on a fresh clone, make -n also shows the venvs' recipes, and where it entered them)
    assert ".venv/bin/python docs/make_screenshots.py" in shown.stdout.splitlines()


def test_the_script_says_what_it_draws():
    shown = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True)
    text = " ".join(shown.stdout.split())
    assert "docs/screenshot.png" in text and "docs/report.png" in text and "--tasks TASKS" in text


def test_the_script_finds_the_servers_in_what_the_demo_prints():
    module = script()
    said = "\n".join([
        "Label Studio is up at http://127.0.0.1:41234 (login admin@example.com / admin12345)",
        "Created project 3 with 60 tasks; signing up 5 annotators...",
        *progress_lines({"controls": {"sentiment": {"spa": 0.5, "ci": [0.4, 0.6], "alpha": 0.3}}}, 1.0, 10),
        live_report_text("http://127.0.0.1:41235", "s3cr-t_", Path("/tmp/service.secret")),
    ])
    assert module.servers(said) == ("http://127.0.0.1:41234", "3", "http://127.0.0.1:41235/s/s3cr-t_/report")
    # the line the script waits for, once the demo is done and its servers keep running
    assert module.READY in (ROOT / "plugin" / "demo.py").read_text()
