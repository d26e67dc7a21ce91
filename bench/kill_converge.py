"""Benchmark: convergence after ``serve`` is killed mid-burst and restarted at once, against Label Studio.

Starts a throwaway Label Studio, a project of N tasks (a Choices and a Rating)
and three annotators, and ``ls-agreement serve`` on it with ``--state-dir``
(so that a restart restores its saved state, as production runs it), Label
Studio calling its webhook. Once the first pass is done and its state saved,
a burst of annotations is created from 8 threads, spread over the tasks; after
K of them the service is killed (SIGKILL: no clean-up at all) and started
again at once on the same port, state directory and secret, while the burst
goes on. Label Studio's webhooks to the dead service are lost for good.
``--kill-after 0`` runs the same burst without a kill, as a control. The
service (and each dry run) runs from a copy of ``plugin`` and ``agreement``
taken at the start: a saved state is refused by other code, so a checkout
edited during the run would otherwise make the restart read every task.

After the last annotation, a batch ``ls-agreement sync --dry-run`` straight
against Label Studio is run each time the service is idle (nothing pending)
after a pass that ended since the last annotation (or since the dry run
before), until one finds nothing to write. A dry run reads every task in full:
run back to back, they kept Label Studio busy and slowed the service's writes
they were waiting for. Converged is when the service's last write was done
(``/status``, polled every half second): the dry run after it proves Label
Studio right at its start, and nothing wrote in between. Prints the time from
the last annotation to convergence, the pass interval, the duration of each of the
service's passes after the restart (``/status`` ``last_pass``: read and
compute), whether convergence came within the interval plus the longest of
those passes, the tasks the service wrote from the last annotation on (its
rate of writes), and the service's restore line and the pass that followed it.

    python bench/kill_converge.py [--tasks 2000] [--burst 400] [--kill-after 200] [--reconcile-interval 20]
                                  [--server production] [--writers N]
    python bench/busy.py --seconds 1200 -- python bench/kill_converge.py

``--server production`` runs Label Studio on PostgreSQL under uwsgi with four
workers (:func:`plugin.labelstudio.localserver.start_production`); the default is its own
development server on SQLite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import requests
from label_studio_sdk import LabelStudio
from live_latency import CONFIG, results

from plugin.keeper.sync import read_project
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.localserver import free_port, sign_up, stop_process, throwaway
from plugin.settings import Connection, MappingOptions, ScoringOptions

SECRET = "kill-converge-secret-0123456789"
HEADERS = {"X-Agreement-Secret": SECRET}


def snapshot(target: Path) -> Path:
    """A copy of this checkout's ``plugin`` and ``agreement`` packages in ``target``, for the service to run from.

    A saved state is refused by code other than the code that saved it (:func:`plugin.state.saved.code_digest`
    reads the source files): run from a copy, the service restarts on the code it was killed with, as in
    production, even while the checkout is being edited.
    """
    root = Path(__file__).resolve().parents[1]
    for package in ("plugin", "agreement"):
        shutil.copytree(root / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def run_env(code: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any ``AGREEMENT_`` setting, the code in ``code`` first, and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGREEMENT_")}
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")])), **extra}


def start_service(code: Path, url: str, token: str, project: int, port: int, log: IO[bytes],
                  *args: str) -> subprocess.Popen[bytes]:
    """``ls-agreement serve`` from ``code`` on ``project`` in a subprocess, its output into ``log``."""
    env = run_env(code, LABEL_STUDIO_URL=url, LABEL_STUDIO_API_KEY=token, AGREEMENT_WEBHOOK_SECRET=SECRET)
    return subprocess.Popen([sys.executable, "-m", "plugin", "serve", "--project", str(project), "--host",
                             "127.0.0.1", "--port", str(port), *args], cwd=code, env=env, stdout=log,
                            stderr=subprocess.STDOUT)


def status_of(url: str, project: int) -> dict[str, Any]:
    """The project's part of the service's ``/status``."""
    return requests.get(f"{url}/status", headers=HEADERS, timeout=10).json()["projects"][str(project)]


def to_write(code: Path, url: str, token: str, project: int) -> int:
    """What a batch sync from ``code`` straight against Label Studio would write now (nothing, once converged)."""
    env = run_env(code, LABEL_STUDIO_URL=url, LABEL_STUDIO_API_KEY=token)
    done = subprocess.run([sys.executable, "-m", "plugin", "sync", "--project", str(project), "--dry-run", "--json",
                           "--quiet"], cwd=code, env=env, capture_output=True, text=True, timeout=600, check=True)
    return int(json.loads(done.stdout)["tasks_to_write"])


@dataclass(frozen=True)
class Sample:
    """One answer of the service's ``/status``, for its project."""

    generation: int  # 0 before the restart, 1 after
    at: float  # time.monotonic()
    pending: int  # writes queued or running
    last_pass: dict[str, Any] | None
    events: int  # events received
    written: int  # tasks written


class PassWatch:
    """Polls the service's ``/status`` from a thread, every half second, and keeps its answers."""

    def __init__(self, url: str, project: int) -> None:
        self.url, self.project = url, project
        self.generation = 0
        self.samples: list[Sample] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            generation = self.generation
            try:
                status = status_of(self.url, self.project)
                sample = Sample(generation, time.monotonic(), int(status["pending_writes"]), status.get("last_pass"),
                                int(status.get("events", 0)), int(status.get("outcomes", {}).get("written", 0)))
            except (requests.RequestException, KeyError, ValueError, TypeError, AttributeError):
                continue
            with self.lock:
                self.samples.append(sample)

    def of(self, generation: int) -> list[Sample]:
        """The answers of the service of ``generation``."""
        with self.lock:
            return [sample for sample in self.samples if sample.generation == generation]

    def passes(self, generation: int) -> list[dict[str, Any]]:
        """The passes the service of ``generation`` reported, in order."""
        seen = {s.last_pass["started_at"]: s.last_pass for s in self.of(generation) if s.last_pass}
        return [seen[key] for key in sorted(seen)]

    def idle_after(self, generation: int, since: float) -> Sample | None:
        """The first answer after a pass ended past ``since`` with nothing pending (None: not yet).

        A pass ended past ``since`` when an answer after it gives a ``last_pass`` other than the one given at
        ``since``; its stale tasks are handed to the writer just after, so the answer looked for is one second
        later at least.
        """
        kept = self.of(generation)
        before = [s.last_pass for s in kept if s.at <= since]
        known = before[-1] if before else None
        ended: float | None = None
        for sample in (s for s in kept if s.at > since):
            if ended is None and sample.last_pass is not None and sample.last_pass != known:
                ended = sample.at
            if ended is not None and sample.at >= ended + 1.0 and sample.pending == 0:
                return sample
        return None

    def written_by(self, generation: int, until: float) -> float | None:
        """When the service's last write up to ``until`` was done: the first answer from which on, to ``until``,
        nothing was pending and the tasks written no longer grew (within the half second between answers)."""
        kept = [s for s in self.of(generation) if s.at <= until]
        if not kept:
            return None
        settled = kept[-1]
        for sample in reversed(kept):
            if sample.pending or sample.written != kept[-1].written:
                break
            settled = sample
        return settled.at

    def counted(self, generation: int, since: float) -> tuple[int, int, float]:
        """Events received, tasks written and seconds elapsed, from ``since`` to the last answer."""
        kept = self.of(generation)
        if not kept:
            return 0, 0, 0.0
        first = next((s for s in kept if s.at >= since), kept[-1])
        return kept[-1].events - first.events, kept[-1].written - first.written, kept[-1].at - first.at


def pass_seconds(report: dict[str, Any]) -> float:
    """Seconds a pass took (``/status`` ``last_pass``): its read and its compute."""
    return float(sum(report["seconds"].values()))


def wait_ready(url: str, project: int, process: subprocess.Popen[bytes], timeout: float) -> dict[str, Any]:
    """Wait until the service's first pass is done, its writes sent and its state saved; return its status."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("The service exited before its first pass was done; see its log.")
        try:
            status = status_of(url, project)
            if status["passes"] >= 1 and not status["pending_writes"] and "saved" in status["saved_state"]:
                return status
        except (requests.RequestException, KeyError, ValueError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"The service's first pass was not done, written and saved within {timeout:.0f} s.")


def after_restart(path: Path) -> list[str]:
    """The lines of the service's log written by the process started after the kill."""
    lines = path.read_text(errors="replace").splitlines()
    starts = [i for i, line in enumerate(lines) if "Started server process" in line]
    return lines[starts[1]:] if len(starts) > 1 else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--burst", type=int, default=400, help="annotations created in the burst")
    parser.add_argument("--kill-after", type=int, default=200,
                        help="annotations created before the SIGKILL (0: no kill, the same burst as a control)")
    parser.add_argument("--reconcile-interval", type=float, default=20.0, help="the service's seconds between passes")
    parser.add_argument("--give-up", type=float, default=600.0,
                        help="seconds after the last annotation after which convergence is no longer awaited")
    parser.add_argument("--log-level", default="INFO", help="the service's --log-level")
    parser.add_argument("--server", choices=("default", "production"), default="default",
                        help="Label Studio's own server on SQLite (default), or PostgreSQL with four uwsgi workers")
    parser.add_argument("--service-log", type=Path, default=None,
                        help="write the service's log here (default: a temporary file, removed at the end)")
    parser.add_argument("--writers", type=int, default=None,
                        help="the service's --writers (default: 2 on SQLite, as the demo runs it; 4 on PostgreSQL)")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    if args.writers is None:
        args.writers = 4 if args.server == "production" else 2
    if not 0 <= args.kill_after < args.burst <= 3 * args.tasks:
        parser.error("--kill-after must be at least 0 and below --burst, and --burst at most 3 annotations a task.")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)",
          flush=True)

    with throwaway("ls-kill-bench-", production=args.server == "production",
                   command=os.environ.get("LABEL_STUDIO_BIN")) as server, \
            tempfile.TemporaryDirectory(prefix="ls-kill-states-") as directory:
        service: subprocess.Popen[bytes] | None = None
        watch: PassWatch | None = None
        code = snapshot(Path(directory) / "code")
        log_path = args.service_log or Path(directory) / "service.log"
        log = open(log_path, "wb")  # noqa: SIM115 - closed in finally
        try:
            admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=300)
            project = admin.projects.create(title="kill bench", label_config=CONFIG).id
            for at in range(0, args.tasks, 1000):
                admin.projects.import_tasks(id=project, request=[{"data": {"text": f"t{i}"}} for i in
                                                                 range(at, min(args.tasks, at + 1000))])
            tasks = sorted(t.id for t in admin.tasks.list(project=project, page_size=1000))
            assert len(tasks) == args.tasks, len(tasks)
            users = [LabelStudio(base_url=server.url, api_key=sign_up(server.url, f"kill{i}@example.com")[1],
                                 timeout=300) for i in range(3)]
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            serve_args = ("--reconcile-interval", str(args.reconcile_interval), "--state-dir",
                          str(Path(directory) / "state"), "--log-level", args.log_level, "--writers", str(args.writers))
            started = time.monotonic()
            service = start_service(code, server.url, server.token, project, port, log, *serve_args)
            first = wait_ready(url, project, service, timeout=900)
            shape = "PostgreSQL, 4 uwsgi workers" if args.server == "production" else "SQLite, its server"
            print(f"Label Studio: {shape}; service writers {args.writers}; "
                  f"{args.tasks:,} tasks; first pass done, written and saved {time.monotonic() - started:.1f} s "
                  f"after the start ({first['last_pass']['kind']}, {pass_seconds(first['last_pass']):.1f} s)",
                  flush=True)
            watch = PassWatch(url, project)
            watch.thread.start()

            rnd = random.Random(args.seed)
            jobs = [(tasks[k // 3], k % 3, random.Random(args.seed * 100_000 + n))
                    for n, k in enumerate(rnd.sample(range(3 * args.tasks), args.burst))]
            lock = threading.Lock()
            created: list[float] = []
            kill_now = threading.Event()

            def create(job: tuple[int, int, random.Random]) -> None:
                task, who, own = job
                users[who].annotations.create(id=task, result=results(own))
                with lock:
                    created.append(time.monotonic())
                    if args.kill_after and len(created) == args.kill_after:
                        kill_now.set()

            known = {first["last_pass"]["started_at"]}  # the passes before the burst
            burst_started = killed = restarted = time.monotonic()
            with ThreadPoolExecutor(max_workers=8) as pool:
                futures = [pool.submit(create, job) for job in jobs]
                while args.kill_after and not kill_now.wait(0.5):
                    failed = [f for f in futures if f.done() and f.exception() is not None]
                    if failed:
                        raise RuntimeError(f"An annotation could not be created: {failed[0].exception()}")
                if args.kill_after:
                    service.send_signal(signal.SIGKILL)
                    service.wait(timeout=30)
                    killed = time.monotonic()
                    watch.generation = 1
                    service = start_service(code, server.url, server.token, project, port, log, *serve_args)
                    restarted = time.monotonic()
                for future in futures:
                    future.result()
            last = max(created)
            print(f"burst: {args.burst} annotations from 8 threads in {last - burst_started:.1f} s; " + (
                f"killed after {args.kill_after} at +{killed - burst_started:.1f} s, started again "
                f"{1000 * (restarted - killed):.0f} ms later; {sum(t > restarted for t in created)} created after"
                if args.kill_after else "no kill (a control)"), flush=True)

            checks: list[tuple[float, float, int]] = []
            converged = None
            generation = 1 if args.kill_after else 0
            mark = last  # a dry run waits for the service to be idle after a pass that ended past the mark
            while time.monotonic() - last < args.give_up:
                if watch.idle_after(generation, mark) is None:
                    time.sleep(0.5)
                    continue
                check_started = time.monotonic()
                left = to_write(code, server.url, server.token, project)
                check_ended = time.monotonic()
                checks.append((check_started - last, check_ended - last, left))
                if left == 0:
                    settled = watch.written_by(generation, check_ended)
                    converged = max(0.0, (settled if settled is not None else check_started) - last)
                    break
                mark = check_ended
            watch.stop.set()
            watch.thread.join(timeout=5)
            before = [p for p in watch.passes(0) if p["started_at"] not in known]
            after = [p for p in watch.passes(generation) if p["started_at"] not in known]
            longest = max((pass_seconds(p) for p in after), default=0.0)
            print("dry runs (from the last annotation: start-end s, tasks to write): "
                  + ", ".join(f"{a:.0f}-{b:.0f} s: {n}" for a, b, n in checks))
            pending = max((s.at for s in watch.of(generation) if s.pending), default=None)
            if args.kill_after:
                answered = next((s.at for s in watch.of(1)), None)
                print(f"the service before the kill: {len(before)} pass(es) in the burst; after the restart: "
                      f"/status answered {answered - killed if answered else float('nan'):.1f} s after the kill")
            final = watch.of(generation)[-1] if watch.of(generation) else None
            if final is not None:
                print(f"the service {'after the restart' if args.kill_after else 'in all'}: {final.events} events "
                      f"received, {final.written} tasks written; writes pending until "
                      f"{pending - last if pending else float('nan'):+.1f} s from the last annotation")
            events, written, span = watch.counted(generation, last)
            print(f"from the last annotation on: {written} tasks written in {span:.0f} s "
                  f"({written / span if span else float('nan'):.2f} a second), {events} events received")
            print(f"passes {'after the restart' if args.kill_after else 'from the burst on'} (kind, tasks read in "
                  "full, seconds read + compute, stale): "
                  + ", ".join(f"{p['kind']} {p['n_tasks']} {pass_seconds(p):.1f} s {p['stale']}" for p in after))
            bound = args.reconcile_interval + longest
            if converged is None:
                print(f"NOT converged within {args.give_up:.0f} s of the last annotation (interval "
                      f"{args.reconcile_interval:.0f} s + longest pass {longest:.1f} s = {bound:.1f} s)")
            else:
                print(f"converged {converged:.1f} s after the last annotation (the service's last write; the dry run "
                      f"that found nothing ran from +{checks[-1][0]:.1f} to +{checks[-1][1]:.1f} s); interval "
                      f"{args.reconcile_interval:.0f} s + longest pass {longest:.1f} s = {bound:.1f} s: "
                      f"{'within' if converged <= bound else 'NOT within'}")
            log.flush()
            if args.kill_after:
                lines = after_restart(log_path)
                restore = [line for line in lines if re.search(r"restored \d+ tasks|saved state is not used", line)]
                passes = [line for line in lines if re.search(r" pass (listed .* and )?read \d+ tasks", line)]
                print("restore: " + (restore[0] if restore else "no restore line in the service's log"))
                print("the pass after it: " + (passes[0] if passes else "none"))
            if converged is None:
                client = LabelStudioClient(Connection(url=server.url, api_key=server.token, timeout=300))
                stale = read_project(client, project, mapping=MappingOptions(), scoring=ScoringOptions())
                report = stale.last_pass()
                left_tasks = sorted(report.stale) if report is not None else []
                print(f"tasks still to write: {left_tasks[:50]}")
            print(f"service log: {log_path}{'' if args.service_log else ' (removed at the end)'}; load average at end: "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            if watch is not None:
                watch.stop.set()
            if service is not None:
                stop_process(service)
            log.close()


if __name__ == "__main__":
    main()
