"""Benchmark: a restart of ``serve`` on a large project, with and without ``--state-dir``, against Label Studio.

Starts a throwaway Label Studio (SQLite, loopback), imports N tasks with three
annotations each, waits out the 60 s margin a pass of changed tasks reads
before its watermark (the newest ``updated_at`` it read), gives 0.1% of the
tasks one more annotation (the last work before the service's last pass, which
that margin reads again), and reads the project once with the service's pass
(the state a running service holds), which is saved as ``serve --state-dir``
saves it. Then 1% of the tasks get one more annotation, as if made while the service
was down, and the service's first pass after a restart is timed both ways:

1. without a saved state: a fresh state, every task read (what every start did
   before ``--state-dir``, and still does without it);
2. with it: the file read and checked, the state restored, and only the tasks
   changed since read.

Both must find the same stale tasks and scores (asserted). The read (Label
Studio serving the pages, this process parsing and mapping them), the restore
and the compute are printed apart; reads are not paced (the service paces a
full read at ``--read-rate``, 200 tasks a second by default, which makes the
restart without a saved state slower still). Nothing is written, since both
passes would write the same tasks.

Then the same for ``ls-agreement sync`` run from cron on that project: a dry
run without and with ``--state-dir`` (the file the service saved: ``sync``
reads the same files), each reading, scoring the whole project and diffing
it; both must find the same tasks to write and the same scores (asserted).

    python bench/restart.py [--tasks 10000]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from label_studio_sdk import LabelStudio
from sync_project import CONFIG, SENTIMENTS, make_tasks

from plugin.clock import now_iso
from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.passes import WATERMARK_MARGIN, full_pass
from plugin.keeper.sync import sync_project
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.localserver import sign_up, throwaway
from plugin.settings import Connection, MappingOptions, ScoringOptions
from plugin.state.saved import StateFiles, read_state, write_state

SECRET = "bench-restart-secret-0123"


def annotate(admin: LabelStudio, tasks: list[int], annotator: int, rnd: random.Random) -> None:
    """One more annotation on each of ``tasks``, by ``annotator`` (moves each task's ``updated_at``)."""
    for task in tasks:
        admin.annotations.create(id=task, completed_by=annotator, result=[
            {"from_name": "sentiment", "to_name": "text", "type": "choices",
             "value": {"choices": [rnd.choice(SENTIMENTS)]}}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--page-size", type=int, default=500)
    args = parser.parse_args()

    with throwaway("ls-restart-bench-", command=os.environ.get("LABEL_STUDIO_BIN")) as server, \
            tempfile.TemporaryDirectory(prefix="ls-restart-states-") as directory:
        annotators = [sign_up(server.url, f"restart{i}@example.com")[0] for i in range(4)]
        admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=600)
        project = admin.projects.create(title="restart bench", label_config=CONFIG).id
        tasks = make_tasks(args.tasks, annotators[:3], 0)
        for at in range(0, len(tasks), 2000):
            admin.projects.import_tasks(id=project, request=tasks[at:at + 2000])
        wait = WATERMARK_MARGIN.total_seconds() + 1
        print(f"{args.tasks:,} tasks imported; waiting {wait:.0f} s, the margin a pass of changed tasks reads again",
              flush=True)
        time.sleep(wait)
        client = LabelStudioClient(Connection(url=server.url, api_key=server.token, page_size=args.page_size,
                                              timeout=600))
        options = {"mapping": MappingOptions(), "scoring": ScoringOptions()}
        ids = [task["id"] for task in client.tasks(project)]
        rnd = random.Random(1)
        # The last work before the service's last pass: a pass of changed tasks reads those in the margin again.
        annotate(admin, rnd.sample(ids, max(1, args.tasks // 1000)), annotators[3], rnd)

        running = ProjectMonitor(project, **options)
        full_pass(client, running)  # the service before its restart
        started = time.perf_counter()
        unsaved, _ = running.unsaved()  # type: ignore[misc]
        size = write_state(unsaved, Path(directory), secret=SECRET, saved_at=now_iso(), source=server.url)
        saved = time.perf_counter() - started
        del running, unsaved

        changed = rnd.sample(ids, max(1, args.tasks // 100))  # made while the service is down
        annotate(admin, changed, annotators[3], rnd)

        cold = ProjectMonitor(project, **options)
        started = time.perf_counter()
        without = full_pass(client, cold)
        cold_s = time.perf_counter() - started

        warm = ProjectMonitor(project, **options)
        started = time.perf_counter()
        restored = read_state(Path(directory), project, secret=SECRET, source=server.url)
        assert restored is not None
        warm.restore(restored.state, watermark=restored.watermark, saved_at=restored.saved_at,
                     n_bytes=restored.n_bytes)
        restore_s = time.perf_counter() - started
        with_state = full_pass(client, warm, incremental=True)
        warm_s = time.perf_counter() - started
        assert with_state.kind == "changed" and sorted(with_state.stale) == sorted(without.stale)
        assert warm.state.scores().tasks == cold.state.scores().tasks  # type: ignore[union-attr]

        print(f"{args.tasks:,} tasks, {len(changed)} changed while down; state saved in {saved:.2f} s "
              f"({size / args.tasks:,.0f} bytes a task)")
        print("| restart | first pass | tasks read | read (pages served, parsed, mapped) | restore | compute | "
              "until the first answer |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name, report, restore, total in (("without a saved state", without, 0.0, cold_s),
                                             ("with --state-dir", with_state, restore_s, warm_s)):
            print(f"| {name} | {report.kind} | {report.n_tasks:,} | {report.seconds['read']:.1f} s | "
                  f"{restore:.2f} s | {report.seconds['compute']:.2f} s | {total:.1f} s |")
        print(f"Stale tasks found: {len(without.stale):,} both ways. Ratio of the first answer's time: "
              f"{cold_s / warm_s:.0f}x.")

        files = StateFiles(Path(directory), secret=SECRET, source=server.url)
        syncs = {}
        for name, state in (("without a saved state", None), ("with --state-dir", files)):
            started = time.perf_counter()
            report = sync_project(client, project, **options, dry_run=True, state=state)
            syncs[name] = (report, time.perf_counter() - started)
        (plain, plain_s), (warm_sync, warm_sync_s) = syncs.values()
        assert warm_sync.read["kind"] == "changed" and warm_sync.tasks_to_write == plain.tasks_to_write
        assert warm_sync.scores.tasks == plain.scores.tasks
        print("| sync --dry-run | read | tasks read | fetch | compute | whole run |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, (report, total) in syncs.items():
            print(f"| {name} | {report.read['kind']} | {report.read['n_tasks']:,} | {report.seconds['fetch']:.1f} s | "
                  f"{report.seconds['compute']:.2f} s | {total:.1f} s |")
        print(f"Tasks to write: {plain.tasks_to_write:,} both ways. Ratio of the sync's time: "
              f"{plain_s / warm_sync_s:.0f}x.")


if __name__ == "__main__":
    main()
