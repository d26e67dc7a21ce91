"""Scores converge whatever happens: a real Label Studio, the real service, and a fault-injecting proxy between them.

Label Studio calls the service's webhook directly; the service reaches Label Studio only through the proxy
(:mod:`tests.faultproxy`), which answers 5xx, times out, drops connections, answers a captive portal's HTML, delays
writes past newer ones, or refuses everything for 30 s. Annotators keep working through Label Studio meanwhile.
After the traffic, the faults are cleared, and within one pass interval plus one pass a batch
``ls-agreement sync --dry-run`` run straight against Label Studio must find nothing to write.
"""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest
import requests
from label_studio_sdk import LabelStudio

from plugin.labelstudio.localserver import free_port, sign_up
from tests.faultproxy import FaultProxy
from tests.integration.test_serve import HEADERS, start_service, status_of, stop

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
<Rating name="quality" toName="text" maxRating="5"/></View>"""
INTERVAL = 3  # seconds between the service's passes
FAULTS_WAIT = 20 * INTERVAL  # seconds more of passes under the faults, at most, until every kind has struck
CONVERGE = 45  # seconds allowed for convergence after the faults end: the interval, a pass, retries in flight
TASK = r"/api/tasks/\d+/?"
LIST = r"/api/tasks/?"


def result(rnd):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices",
             "value": {"choices": [rnd.choice(["pos", "neg", "neu"])]}},
            {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": rnd.randint(1, 5)}}]


@pytest.fixture(scope="module")
def world(label_studio, tmp_path_factory):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="faults", label_config=CONFIG).id
    admin.projects.import_tasks(id=project, request=[{"data": {"text": f"t{i}"}, "meta": {"origin": i}}
                                                     for i in range(24)])
    tasks = sorted(t.id for t in admin.tasks.list(project=project, page_size=100))
    annotators = [LabelStudio(base_url=label_studio.url, api_key=sign_up(label_studio.url, f"f{i}@example.com")[1])
                  for i in range(3)]
    log = open(tmp_path_factory.mktemp("faults") / "service.log", "wb")  # noqa: SIM115
    with FaultProxy(label_studio.url, seed=7) as proxy:
        port = free_port()
        args = ("--reconcile-interval", str(INTERVAL), "--full-pass-every", "3", "--timeout", "2",
                "--unhealthy-after", "4")
        process, url = start_service(proxy.url, label_studio.token, project, port, log, *args)
        world = {"admin": admin, "project": project, "tasks": tasks, "annotators": annotators, "proxy": proxy,
                 "process": process, "url": url, "port": port, "log": log, "args": args, "label_studio": label_studio,
                 "created": {}}
        yield world
        stop(world["process"])
    log.close()


def annotate(world, n, seed, *, pause=0.05):
    """``n`` annotations (new, or edits of an annotator's earlier one) on random tasks, from two threads."""
    rnd = random.Random(seed)
    jobs = [(rnd.choice(world["tasks"][:16]), rnd.randrange(3), random.Random(seed * 1000 + i)) for i in range(n)]
    lock = threading.Lock()

    def work(part):
        for task, who, own in part:
            key = (task, who)
            with lock:
                existing = world["created"].get(key)
            client = world["annotators"][who]
            if existing is None:
                created = client.annotations.create(id=task, result=result(own))
                with lock:
                    world["created"][key] = created.id
            else:
                client.annotations.update(id=existing, result=result(own))
            time.sleep(pause)

    threads = [threading.Thread(target=work, args=(jobs[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def to_write(world):
    """What a batch sync straight against Label Studio would write now (nothing, once converged)."""
    env = {**os.environ, "LABEL_STUDIO_URL": world["label_studio"].url, "LABEL_STUDIO_API_KEY":
           world["label_studio"].token}
    done = subprocess.run([sys.executable, "-m", "plugin", "sync", "--project", str(world["project"]), "--dry-run",
                           "--json", "--quiet"], env=env, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)["tasks_to_write"]


def assert_converges(world):
    deadline = time.monotonic() + CONVERGE
    while True:
        left = to_write(world)
        if left == 0:
            break
        assert time.monotonic() < deadline, f"{left} tasks still differ from a batch sync after {CONVERGE} s"
        time.sleep(1.0)
    for task in world["tasks"]:  # other clients' keys survive every fault
        assert world["admin"].tasks.get(id=str(task)).meta["origin"] == world["tasks"].index(task)


@pytest.mark.slow
def test_proxy_faults_during_traffic(world):
    proxy = world["proxy"]
    proxy.fail(503, method="GET", path=LIST, probability=0.3)
    proxy.fail(502, method="GET", path=r"/api/projects/\d+/?", probability=0.3)
    proxy.fail(500, method="PATCH", path=TASK, probability=0.15)
    proxy.portal(method="PATCH", path=TASK, probability=0.1)
    proxy.drop(after=True, method="PATCH", path=TASK, probability=0.1)  # applied, the answer lost
    proxy.drop(method="GET", path=LIST, probability=0.1)
    proxy.delay_response(3, method="PATCH", path=TASK, probability=0.1)  # past the 2 s timeout: retried
    proxy.delay_request(4, method="PATCH", path=TASK, probability=0.15)  # lands after a newer write
    annotate(world, 40, seed=1)
    time.sleep(2 * INTERVAL)  # passes run under the faults too
    # Each kind of fault has to have struck. The draws are seeded, but how many requests reach a rule depends on
    # timing (a pass's task list is read a few times a run), so passes go on under the faults until every kind
    # has struck once, for at most FAULTS_WAIT seconds more.
    deadline = time.monotonic() + FAULTS_WAIT
    kinds = ("status", "portal", "drop_after", "drop_before", "delay_response", "delay_request")
    injected = {fault: proxy.injected(fault) for fault in kinds}
    while not all(injected.values()) and time.monotonic() < deadline:
        time.sleep(0.5)
        injected = {fault: proxy.injected(fault) for fault in kinds}
    proxy.clear()
    assert all(injected.values()), injected
    assert_converges(world)
    status = status_of(world["url"], world["project"])
    assert status["outcomes"]["written"] > 0 and status["passes"] >= 2
    assert requests.get(f"{world['url']}/health", timeout=5).status_code == 200
    assert world["process"].poll() is None


@pytest.mark.slow
def test_label_studio_unreachable_for_30_seconds_while_events_arrive(world):
    proxy = world["proxy"]
    proxy.down(30)
    started = time.monotonic()
    annotate(world, 24, seed=2, pause=0.3)  # Label Studio itself runs: annotators work, its webhooks arrive
    saw_down = False
    while time.monotonic() - started < 30:
        health = requests.get(f"{world['url']}/health", timeout=5)
        saw_down |= health.status_code == 503 and health.json() == {"status": "DOWN"}
        time.sleep(0.5)
    proxy.up()
    assert saw_down
    assert_converges(world)
    assert requests.get(f"{world['url']}/health", timeout=5).status_code == 200
    status = requests.get(f"{world['url']}/status", headers=HEADERS, timeout=5).json()
    assert status["label_studio"]["reachable"] and world["process"].poll() is None


@pytest.mark.slow
def test_the_service_killed_mid_burst_and_restarted_while_annotation_goes_on(world, keep_process):
    burst = threading.Thread(target=annotate, args=(world, 40, 3), kwargs={"pause": 0.1})
    burst.start()
    time.sleep(3)
    world["process"].send_signal(signal.SIGKILL)  # no clean-up at all
    world["process"].wait(timeout=10)
    time.sleep(3)  # annotation goes on; Label Studio's webhooks to the dead service are lost for good
    world["process"], _ = start_service(world["proxy"].url, world["label_studio"].token, world["project"],
                                        world["port"], world["log"], *world["args"], wait=False)
    keep_process(world["process"].pid)  # the module fixture stops it
    burst.join()
    assert_converges(world)
    assert len(world["admin"].webhooks.list(project=str(world["project"]))) == 1


def test_connections_closed_while_idle_cost_no_wait_and_no_unreachable(label_studio):
    """A server that closes idle kept-alive connections (uwsgi's http router without http-keepalive; here the proxy,
    after 0.2 s): every read and write still succeeds, none waits for a retry, none counts Label Studio as down."""
    from plugin.labelstudio.client import LabelStudioClient
    from plugin.settings import Connection

    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="idle connections", label_config=CONFIG).id
    admin.projects.import_tasks(id=project, request=[{"data": {"text": "t"}}])
    task = next(iter(admin.tasks.list(project=project))).id
    sleeps = []
    with FaultProxy(label_studio.url, idle_timeout=0.2) as proxy:
        client = LabelStudioClient(Connection(url=proxy.url, api_key=label_studio.token), sleep=sleeps.append)
        for i in range(8):
            assert [t["id"] for t in client.tasks_by_id(project, [task])] == [task]
            client.update_meta(task, {"round": i})
            time.sleep(0.4)  # longer than the proxy keeps an idle connection
        assert proxy.seen("PATCH", r"/api/tasks/\d+") == 8
    assert sleeps == [] and client.reachability.last_error is None
    assert admin.tasks.get(id=str(task)).meta == {"round": 7}
