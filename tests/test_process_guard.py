"""The guard in tests/conftest.py fails a test whose process outlives it, and leaves nothing behind itself."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.processes import descendants

ROOT = Path(__file__).resolve().parents[1]
LEAKY = '''
import subprocess

def test_leaks_a_process():
    subprocess.Popen(["sleep", "60"])

def test_stops_its_process():
    process = subprocess.Popen(["sleep", "60"])
    process.terminate()
    process.wait()
'''


def test_a_process_left_running_fails_its_test(tmp_path):
    path = tmp_path / "test_leaky.py"
    path.write_text(LEAKY)
    # The inner session waits a second, not the guard's usual five, for the leaked sleep to go (twice: after its
    # test and at the end of the session); it never goes.
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                            str(path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env={**os.environ, "TESTS_PROCESS_GRACE": "1"})
    try:
        out, _ = run.communicate(timeout=120)
    finally:
        for pid, command in descendants(run.pid).items():  # the leaked sleep, if the inner run left it
            if command.startswith("sleep"):
                os.kill(pid, signal.SIGKILL)
    assert run.returncode == 1, out
    assert "processes outlived the test: " in out and "sleep 60" in out
    assert "processes outlived the test session: " in out  # and the session, which ends with it still there
    assert "2 passed, 2 errors" in out  # the errors are the guard's: each test's own assertions passed
    # The leaked sleep was re-parented when the inner run ended; find and end it.
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == b"sleep\x0060\x00":
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                continue
