"""What ``sync`` and ``serve`` ask of a real Label Studio: nothing it answers with an error, and little when idle.

Label Studio answers a page past the last with 404 "Invalid page." and logs a traceback for it; a reader that
stops only on an empty page asks for one on every read, and the worst case of a reader that stops on a short page
is a number of items that is an exact multiple of the page size. So the project here has 20 tasks read in pages of
10, and Label Studio holds exactly 100 projects, one page of the project list (which ``serve`` reads every
``--discover-interval``). Both commands reach Label Studio through a loopback proxy without faults
(:mod:`tests.faultproxy`), which records every request, its answer's status and Label Studio's time for it; Label
Studio's own log (its server's output, ``label-studio.log`` in its data dir) must hold no "Invalid page" and no
traceback.

An idle pass of ``serve`` (nothing changed since the pass before) asks for the project's config (a changed one is
re-mapped) and one page of its tasks newest first, of 10 tasks (a task changed since would be first; the page's
``total`` is the task count, by which a task deleted unheard of shows): two requests a project. Run with ``-s`` to
see what each request of an idle pass costs Label Studio.
"""

import os
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from datetime import timedelta
from urllib.parse import parse_qs

import pytest
import requests
from label_studio_sdk import LabelStudio

from plugin.clock import parse_time
from plugin.labelstudio.client import CHANGED_PROBE, LabelStudioClient
from plugin.labelstudio.localserver import free_port, sign_up
from plugin.settings import Connection
from tests.faultproxy import FaultProxy
from tests.integration.test_serve import CONFIG, HEADERS, results, start_service, status_of, stop

PAGE = 10  # tasks per page (--page-size)
N_TASKS = 2 * PAGE  # exactly two pages
N_PROJECTS = 100  # exactly one page of the project list
INTERVAL = 3  # seconds between passes, and between reads of the project list
IDLE_PASSES = 3


@pytest.fixture(scope="module")
def world(label_studio):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="requests", label_config=CONFIG).id
    admin.projects.import_tasks(id=project, request=[{"data": {"text": f"Alice {i}"}} for i in range(N_TASKS)])
    for i in range(N_PROJECTS - 1):
        admin.projects.create(title=f"filler {i}")
    # the first page only, read as such (the SDK's pager would ask for a page past the last)
    tasks = sorted(int(t.id) for t in admin.tasks.list(project=project, page=1, page_size=100).items or [])
    listed = requests.get(f"{label_studio.url}/api/projects/", params={"include": "id", "page_size": 100},
                          headers={"Authorization": f"Token {label_studio.token}"}, timeout=30).json()
    assert len(tasks) == N_TASKS and listed["count"] == N_PROJECTS and listed["next"] is None
    annotators = [LabelStudio(base_url=label_studio.url, api_key=sign_up(label_studio.url, f"req{i}@example.com")[1])
                  for i in range(2)]
    for n, task in enumerate(tasks[:12]):
        for who, client in enumerate(annotators):
            client.annotations.create(id=task, result=results("pos" if (n + who) % 3 else "neg"))
    return {"admin": admin, "project": project, "tasks": tasks, "server": label_studio}


def server_log(server):
    return server.data_dir / "label-studio.log"


def logged_since(server, offset):
    with open(server_log(server), "rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


def kind(exchange, project):
    """A request as a line of the table: method, path pattern."""
    path = exchange.path.rstrip("/")
    if path == f"/api/projects/{project}":
        return f"{exchange.method} /api/projects/{{id}}/"
    if path.startswith("/api/tasks/") and path != "/api/tasks":
        return f"{exchange.method} /api/tasks/{{id}}/"
    if path.startswith("/api/dm/views/"):
        return f"{exchange.method} /api/dm/views/{{id}}/"
    if path.startswith("/api/webhooks/"):
        return f"{exchange.method} /api/webhooks/{{id}}/"
    return f"{exchange.method} {path}/"


def settled(url, project, passes):
    """Wait until the service has counted ``passes`` passes of ``project`` and that pass is over; return it."""
    deadline = time.monotonic() + 10 * INTERVAL
    while (now := status_of(url, project)["passes"]) < passes:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(INTERVAL / 2)  # its tail (the tabs): a pass takes well under INTERVAL / 2 here
    assert status_of(url, project)["passes"] == now, "a pass came sooner than INTERVAL after the last"
    return now


def no_errors(exchanges):
    return [(e.method, e.path, e.query, e.status) for e in exchanges if e.status is None or e.status >= 400]


def pages(exchanges, path):
    return [int(parse_qs(e.query).get("page", ["1"])[0]) for e in exchanges if e.path.rstrip("/") == path]


def test_sync_reads_every_page_and_none_past_the_last(world, tmp_path):
    server, project = world["server"], world["project"]
    offset = server_log(server).stat().st_size
    with FaultProxy(server.url) as proxy:
        env = {**os.environ, "LABEL_STUDIO_URL": proxy.url, "LABEL_STUDIO_API_KEY": server.token}
        done = subprocess.run([sys.executable, "-m", "plugin", "sync", "--project", str(project), "--page-size",
                               str(PAGE), "--quiet", "--json"], env=env, capture_output=True, text=True, timeout=300)
        seen = proxy.log
    assert done.returncode == 0, done.stderr
    full_read = [e for e in seen if e.path.rstrip("/") == "/api/tasks" and "query=" not in e.query]
    assert pages(full_read, "/api/tasks") == [1, 2]  # 20 tasks in pages of 10: two requests, no third
    assert no_errors(seen) == []
    logged = logged_since(server, offset)
    assert "Invalid page" not in logged and "Traceback" not in logged, logged[-3000:]


def test_serve_asks_for_no_page_past_the_last_and_an_idle_pass_makes_two_requests(world, tmp_path):
    server, project = world["server"], world["project"]
    offset = server_log(server).stat().st_size
    log = open(tmp_path / "service.log", "wb")  # noqa: SIM115
    with FaultProxy(server.url) as proxy:
        process, url = start_service(proxy.url, server.token, project, free_port(), log, "--page-size", str(PAGE),
                                     "--reconcile-interval", str(INTERVAL), "--discover-interval", str(INTERVAL),
                                     "--full-pass-every", "1000", "--min-gt-accuracy", "0.5")
        try:
            deadline = time.monotonic() + 90
            while True:  # the first pass's writes read back, the margin below them looked into: then idle
                status = status_of(url, project)
                last = status["last_pass"] or {}
                if (last.get("kind") == "changed" and last.get("n_tasks") == 0 and last.get("stale") == 0
                        and not status["pending_writes"] and status["passes"] >= 3):
                    break
                assert time.monotonic() < deadline, status
                time.sleep(0.2)
            # from between two passes to between two passes: IDLE_PASSES whole passes (a pass counts once its
            # writes are asked for, before its tabs)
            start = settled(url, project, status["passes"])
            before = proxy.log
            proxy.reset_counters()
            settled(url, project, start + IDLE_PASSES)
            idle = proxy.log
            assert all((status_of(url, project)["last_pass"] or {}).get(k) == 0 for k in ("n_tasks", "stale"))
        finally:
            stop(process)
            log.close()
    everything = before + idle

    per_kind = Counter(kind(e, project) for e in idle)
    times = defaultdict(list)
    for e in idle:
        times[kind(e, project)].append(e.seconds or 0.0)
    lines = [f"{IDLE_PASSES} idle passes of project {project} ({N_TASKS} tasks, --page-size {PAGE}):"]
    for name, n in sorted(per_kind.items()):
        lines.append(f"  {name:34s} {n / IDLE_PASSES:5.2f} a pass, Label Studio "
                     f"{statistics.mean(times[name]) * 1000:6.1f} ms each")
    passes_only = {name: n for name, n in per_kind.items() if name != "GET /api/projects/"}  # the list: not a pass's
    lines.append(f"  a pass: {sum(passes_only.values()) / IDLE_PASSES:.2f} requests, Label Studio "
                 f"{sum(sum(times[name]) for name in passes_only) / IDLE_PASSES * 1000:.1f} ms")
    print("\n" + "\n".join(lines))
    # the project list: 100 projects, one page, read every INTERVAL seconds, never a second page
    listed = pages(everything, "/api/projects")
    assert listed and set(listed) == {1}, listed
    # the project's tasks: no page past the second (and no request Label Studio answered with an error)
    assert max(pages(everything, "/api/tasks")) <= 2
    assert no_errors(everything) == []
    logged = logged_since(server, offset)
    assert "Invalid page" not in logged and "Traceback" not in logged, logged[-3000:]

    # an idle pass: the project's config and one page of its tasks, newest first; nothing else
    assert passes_only == {"GET /api/projects/{id}/": IDLE_PASSES, "GET /api/tasks/": IDLE_PASSES}, lines
    probes = [parse_qs(e.query) for e in idle if e.path.rstrip("/") == "/api/tasks"]
    assert all(q["page"] == ["1"] and q["page_size"] == [str(min(PAGE, CHANGED_PROBE))] for q in probes), probes


def test_a_read_of_changed_tasks_asks_for_a_small_page_first_and_each_task_once(world):
    # --page-size above the probe's: a read of changed tasks asks for CHANGED_PROBE tasks, and for pages of the page
    # size only when they are all newer (from the first page: the probe's tasks are not given twice)
    server, project = world["server"], world["project"]
    offset = server_log(server).stat().st_size
    with FaultProxy(server.url) as proxy:
        client = LabelStudioClient(Connection(url=proxy.url, api_key=server.token, page_size=50))
        everything = list(client.tasks(project))
        newest = max(parse_time(t["updated_at"]) for t in everything)
        asked = []
        for since, changed in ((newest, 0), (newest - timedelta(days=1), N_TASKS)):
            proxy.reset_counters()
            read = list(client.tasks(project, updated_after=since))
            assert len(read) == len({t["id"] for t in read}) == changed
            asked.append([(int(parse_qs(e.query)["page"][0]), int(parse_qs(e.query)["page_size"][0]))
                          for e in proxy.log])
            assert no_errors(proxy.log) == []
    assert len(everything) == N_TASKS
    assert asked == [[(1, CHANGED_PROBE)], [(1, CHANGED_PROBE), (1, 50)]]
    logged = logged_since(server, offset)
    assert "Invalid page" not in logged and "Traceback" not in logged, logged[-3000:]


def test_a_pass_after_its_own_writes_lists_the_tasks_and_reads_none_in_full(world):
    # Label Studio moves a task's updated_at on the service's own writes; the pass after them lists the tasks by
    # their stamps (no annotation built) and reads none in full: each write's answer was taken as a read of it,
    # consensus predictions included (written before the meta, so that the meta's answer holds them)
    from plugin.keeper.cycle import run_cycle
    from plugin.keeper.monitor import ProjectMonitor
    from plugin.keeper.passes import refresh_tasks
    from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions

    server, project = world["server"], world["project"]
    offset = server_log(server).stat().st_size
    with FaultProxy(server.url) as proxy:
        client = LabelStudioClient(Connection(url=proxy.url, api_key=server.token, page_size=PAGE))
        monitor = ProjectMonitor(project, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20),
                                 review=ReviewOptions(consensus_predictions=True, mirror_to_data=True))
        write = lambda stale: refresh_tasks(client, monitor, list(stale))  # noqa: E731
        run_cycle(client, monitor, write=write, full_read=True)
        for _ in range(3):  # until a pass finds nothing to write (the first's writes, and any drift they bring)
            monitor.passes += 1
            cycle = run_cycle(client, monitor, full_pass_every=1000, write=write)
            if not cycle.read.stale:
                break
        proxy.reset_counters()
        monitor.passes += 1
        after = run_cycle(client, monitor, full_pass_every=1000, write=write)
        asked = [(e.method, e.path.rstrip("/"), parse_qs(e.query)) for e in proxy.log]
        assert no_errors(proxy.log) == []
    assert cycle.read.stale == [] and cycle.read.n_tasks == 0 and cycle.read.n_listed > 0, cycle.read
    assert after.read.kind == "changed" and after.read.n_tasks == 0 and after.read.stale == []
    listings = [query for method, path, query in asked if path == "/api/tasks"]
    assert listings and all(q["fields"] == ["task_only"] and q["include"] == ["id,updated_at"] for q in listings)
    # the config, and pages of stamps (those changed within the margin below the newest read: every task here)
    assert after.read.requests == len(asked) and {path for _, path, _ in asked} == {f"/api/projects/{project}",
                                                                                    "/api/tasks"}, asked
    logged = logged_since(server, offset)
    assert "Invalid page" not in logged and "Traceback" not in logged, logged[-3000:]


def test_an_annotation_costs_one_write_and_no_read(world, tmp_path):
    # An annotation's webhook carries the annotation and the task's own fields; with the task's other annotations
    # as last read (here: none, or the first annotation's write's answer), the service writes without reading, and
    # Label Studio's answer to the write confirms what it was computed from.
    server, project, tasks = world["server"], world["project"], world["tasks"][12:16]
    annotators = [LabelStudio(base_url=server.url, api_key=sign_up(server.url, f"cost{i}@example.com")[1])
                  for i in range(2)]
    admin = world["admin"]
    offset = server_log(server).stat().st_size
    log = open(tmp_path / "service.log", "wb")  # noqa: SIM115
    with FaultProxy(server.url) as proxy:
        process, url = start_service(proxy.url, server.token, project, free_port(), log,
                                     "--reconcile-interval", "1000", "--discover-interval", "1000")
        try:
            deadline = time.monotonic() + 60
            while status_of(url, project)["pending_writes"] or not status_of(url, project)["passes"]:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            proxy.reset_counters()
            for who, client in enumerate(annotators):
                for n, task in enumerate(tasks):
                    client.annotations.create(id=task, result=results("pos" if (n + who) % 2 else "neg"))
                # each task's write answered before its next annotation: an annotation saved before the write's
                # answer would make that answer differ from the event, and the task be read and written again
                deadline = time.monotonic() + 30
                while any((admin.tasks.get(id=task).meta or {}).get("agreement", {}).get("n_annotations") != who + 1
                          for task in tasks) or status_of(url, project)["pending_writes"]:
                    assert time.monotonic() < deadline, status_of(url, project)
                    time.sleep(0.2)
            writes = requests.get(f"{url}/status", headers=HEADERS, timeout=5).json()["writes"]
            during = proxy.log  # before the stop's removal of its webhook
        finally:
            stop(process)
            log.close()
        asked = Counter(kind(e, project) + (" selectedItems" if "selectedItems" in (e.query or "") else "")
                        for e in during)
        assert no_errors(proxy.log) == []
    # the tasks' writes, and no read of a task (the first pass's tail, its tabs, may still be asked for meanwhile)
    on_tasks = {name: n for name, n in asked.items() if "/api/tasks" in name}
    assert on_tasks == {"PATCH /api/tasks/{id}/": 2 * len(tasks)}, asked
    assert "written from its event, read again" not in writes, writes
    for task in tasks:  # what a read of every task gives
        meta = admin.tasks.get(id=task).meta
        assert meta["agreement"]["controls"]["sentiment"]["spa"] == 0.0, meta
    logged = logged_since(server, offset)
    assert "Invalid page" not in logged and "Traceback" not in logged, logged[-3000:]
