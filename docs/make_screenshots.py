"""Draw the README's pictures from the demo: the scores in Label Studio's Data Manager, and the admin report.

    make screenshots                                   (installs what it needs, then runs this)
    .venv/bin/python docs/make_screenshots.py [--tasks 60]

It runs ``ls-agreement demo`` with fewer tasks (60) in a scratch data directory, on free ports, and once the
simulated annotators are done and the service's last pass has written every task's scores, photographs in
headless Chromium:

- ``docs/screenshot.png``: the demo project's Data Manager, each task with its score in the agreement_score column
  (its Default tab, without the columns the review tab hides);
- ``docs/tab.png``: the "Low agreement" tab, the flagged tasks worst first;
- ``docs/report.png``: the admin report, as the service serves it live (the browser address the demo prints).

Then it stops the demo (Ctrl-C: Label Studio and the service with it). It takes about three minutes, most of them
Label Studio migrating its new database.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty, Queue

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "docs"
READY = "keep running. Press Ctrl-C"
"""What the demo prints once it is done and waits, its servers up."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The script's options."""
    parser = argparse.ArgumentParser(description="Run a short `ls-agreement demo` on a local Label Studio and "
                                                 "photograph its scores in headless Chromium: docs/screenshot.png "
                                                 "(the Data Manager), docs/tab.png (the Low agreement tab) and "
                                                 "docs/report.png (the admin report).")
    parser.add_argument("--tasks", type=int, default=60, help="tasks in the demo project (60)")
    parser.add_argument("--pace", type=float, default=0.2,
                        help="mean seconds between one simulated annotator's submissions (0.2)")
    parser.add_argument("--label-studio",
                        default=os.environ.get("LABEL_STUDIO_BIN") or str(ROOT / ".venv-ls" / "bin" / "label-studio"),
                        help="the label-studio command (default: $LABEL_STUDIO_BIN, else .venv-ls's)")
    parser.add_argument("--out", type=Path, default=HERE, help="the folder the pictures are written to (docs)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds to wait for the demo to finish before giving up (600)")
    return parser.parse_args(argv)


def _lines(stream: object, into: Queue[str | None]) -> None:
    """Pass each line the demo prints to ``into``, and None when it ends."""
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        into.put(line.rstrip("\n"))
    into.put(None)


def wait_for_demo(demo: subprocess.Popen[str], *, timeout: float) -> str:
    """What the demo printed up to the moment it waits with its servers up (echoed as it comes).

    Raises
    ------
    RuntimeError
        If the demo ends first, or does not finish within ``timeout`` seconds.
    """
    lines: Queue[str | None] = Queue()
    threading.Thread(target=_lines, args=(demo.stdout, lines), daemon=True).start()
    said: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1.0)
        except Empty:
            continue
        if line is None:
            raise RuntimeError(f"The demo ended (status {demo.wait()}) before its servers were ready.")
        print(line, flush=True)
        said.append(line)
        if READY in line:
            return "\n".join(said)
    raise RuntimeError(f"The demo did not finish within {timeout:.0f} s.")


def found(pattern: str, text: str) -> str:
    """The first group of ``pattern`` in what the demo printed."""
    match = re.search(pattern, text)
    if match is None:
        raise RuntimeError(f"The demo's output does not say {pattern!r}.")
    return match.group(1)


def servers(said: str) -> tuple[str, str, str]:
    """Label Studio's URL, the demo project's id and the live report's address, from what the demo printed.

    The report's is the address a browser opens, the secret in it.
    """
    return (found(r"Label Studio is up at (\S+)", said), found(r"Created project (\d+)", said),
            found(r"(?m)^\s*(http://\S+/s/\S+/report)$", said))


def tidy_default_tab(url: str, project: str) -> None:
    """Hide from the project's Default tab the columns the review tab hides, so that each task's score shows.

    The score's column shows numbers, as in the review tab.

    Through the Data Manager's API, with the local server's admin token.

    Raises
    ------
    RuntimeError
        If the project has no Default tab.
    """
    import requests

    from plugin.keeper.tabs import HIDDEN_COLUMNS
    from plugin.labelstudio.localserver import ADMIN_TOKEN
    from plugin.state.blocks import DATA_KEY

    headers = {"Authorization": f"Token {ADMIN_TOKEN}"}
    views = requests.get(f"{url}/api/dm/views/", params={"project": project}, headers=headers, timeout=30).json()
    default = next((view for view in views if (view.get("data") or {}).get("title") == "Default"), None)
    if default is None:
        raise RuntimeError(f"Project {project} has no Default tab.")
    hidden = list(HIDDEN_COLUMNS)
    shown_as = {**(default["data"].get("columnsDisplayType") or {}), f"tasks:data.{DATA_KEY}": "Number"}
    data = {**default["data"], "hiddenColumns": {"explore": hidden, "labeling": hidden}, "columnsDisplayType": shown_as}
    requests.patch(f"{url}/api/dm/views/{default['id']}/", json={"project": int(project), "data": data},
                   headers=headers, timeout=30).raise_for_status()


def photograph(said: str, out: Path) -> None:
    """The three pictures, from the servers the demo's output names."""
    sys.path.insert(0, str(ROOT))
    from plugin.labelstudio import localserver
    from tests.browser import browser_page

    url, project, report = servers(said)
    with browser_page(width=1500, height=900) as page:
        page.goto(f"{url}/user/login/")
        page.fill("input[name=email]", localserver.ADMIN_EMAIL)
        page.fill("input[name=password]", localserver.ADMIN_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
        page.goto(f"{url}/projects/{project}/data")  # the first visit makes the Default tab
        page.locator(".lsf-table-row").first.wait_for(timeout=60_000)
        tidy_default_tab(url, project)
        page.reload()
        for tab, picture, size in (("Default", "screenshot.png", (1500, 900)),
                                   ("Low agreement", "tab.png", (1300, 620))):
            page.set_viewport_size({"width": size[0], "height": size[1]})
            page.get_by_text(tab, exact=True).first.click()
            page.locator(".lsf-table-row").first.wait_for(timeout=60_000)
            page.wait_for_load_state("networkidle")
            page.locator(".lsf-th[data-id='tasks:data.agreement_score']").wait_for(timeout=30_000)
            page.screenshot(path=str(out / picture))
            print(f"Wrote {out / picture}", flush=True)
    with browser_page(width=1300, height=1500) as page:
        page.goto(report)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(out / "report.png"))
        print(f"Wrote {out / 'report.png'}", flush=True)


def stop(demo: subprocess.Popen[str]) -> None:
    """Stop the demo as Ctrl-C does (it stops Label Studio and the service), and kill it if it hangs."""
    if demo.poll() is None:
        demo.send_signal(signal.SIGINT)
        try:
            demo.wait(timeout=60)
        except subprocess.TimeoutExpired:
            demo.kill()
            demo.wait()


def main(argv: list[str] | None = None) -> int:
    """Run the demo, photograph it, stop it; 0 when the three pictures were written."""
    args = parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from plugin.labelstudio.localserver import free_port

    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        demo = subprocess.Popen(
            [sys.executable, "-m", "plugin", "demo", "--data-dir", str(Path(scratch) / "demo"), "--tasks",
             str(args.tasks), "--pace", str(args.pace), "--reconcile-interval", "5", "--port", str(free_port()),
             "--service-port", str(free_port()), "--label-studio", args.label_studio],
            cwd=ROOT, stdout=subprocess.PIPE, text=True, bufsize=1)
        try:
            photograph(wait_for_demo(demo, timeout=args.timeout), args.out)
        except RuntimeError as error:
            print(f"make_screenshots: error: {error}", file=sys.stderr)
            return 1
        finally:
            stop(demo)
    print(f"Done in {time.monotonic() - started:.0f} s.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
