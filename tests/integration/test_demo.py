"""``ls-agreement demo`` end to end, small and twice: the second run reuses the data dir."""

import re
import shutil
import socket

import pytest

from plugin.cli import main
from plugin.labelstudio.localserver import free_port
from tests.integration.conftest import LABEL_STUDIO_BIN


def port_is_free(port):
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.slow
def test_demo_runs_twice_and_stops_everything(label_studio_template, tmp_path, capsys):
    data_dir = tmp_path / "demo"
    shutil.copytree(label_studio_template, data_dir / "label-studio")  # skip the first migration in the test
    for run in range(2):
        port, service_port = free_port(), free_port()
        status = main(["demo", "--data-dir", str(data_dir), "--tasks", "12", "--pace", "0", "--no-wait",
                       "--port", str(port), "--service-port", str(service_port), "--reconcile-interval", "2",
                       *(["--label-studio", LABEL_STUDIO_BIN] if LABEL_STUDIO_BIN else [])])
        out = capsys.readouterr().out
        assert status == 0, out
        assert "SPA" in out and "Project scores" in out
        for control in ("sentiment", "topics", "entities", "helpfulness"):
            assert f"  {control}" in out
        assert f"http://127.0.0.1:{port}/projects/" in out and "admin@example.com" in out
        assert "tasks are flagged for low agreement" in out
        # how to ask for /status with its secret, and the latency with its unit (before: a URL that answers 401,
        # and a Python dict without a unit)
        secret_file = (data_dir / "service.secret").resolve()
        assert f'curl -s -H "X-Agreement-Secret: $(cat {secret_file})" http://127.0.0.1:{service_port}/status' in out
        assert "event-to-meta latency: median " in out and " ms, 95th percentile " in out and "'p50'" not in out
        # the live report at the address a browser opens (before: one it answers 401, the secret in a header)
        secret = secret_file.read_text().strip()
        assert f"\n  http://127.0.0.1:{service_port}/s/{secret}/report\n" in out
        # progress fits 100 columns; scores with 3 decimals there and at the end (before: 200 columns, and 2 and 6)
        progress = [line for line in out.splitlines() if " α " in line]
        assert progress and all(len(line) <= 100 for line in progress)
        assert re.search(r"sentiment: SPA \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] α -?\d\.\d{3}", out)
        assert re.search(r"  sentiment +choices +nominal +items +\d+  SPA \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]  "
                         r"alpha -?\d\.\d{3}\n", out)
        # References: one task of 12 imported with its known answer, and two model versions on every task.
        assert "sentiment: against the ground truth on 1 task," in out
        assert "sentiment: model sim-model-v1 on 12 tasks" in out and "model sim-model-v2 on 12 tasks" in out
        assert 'id="references"' in (data_dir / "report.html").read_text()
        # The admin report is written into the data dir and its path printed; Label Studio counts a task as
        # labeled only once it holds the overlap's number of annotations (3), so some wait for more.
        report = data_dir / "report.html"
        assert f"The admin report: {report.resolve()}" in out and "Wrote the report of 12 tasks" in out
        assert report.read_text().startswith("<!DOCTYPE html>")
        labeled = int(out.split("Label Studio counts ")[1].split(" of 12")[0])
        assert 0 <= labeled < 12 and "(overlap 3)" in out
        assert out.rstrip().endswith("Stopped Label Studio and the agreement service.")
        assert port_is_free(port) and port_is_free(service_port)
    # no request of the demo or its service was one Label Studio answers with an error and a traceback in its log
    # (before: a read of a page past the last, by the demo's reads of its tasks and the service's of the projects)
    logged = (data_dir / "label-studio" / "label-studio.log").read_text(errors="replace")
    assert "Invalid page" not in logged and "Traceback" not in logged, logged[-3000:]
