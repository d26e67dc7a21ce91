"""The compose stack as teams deploy it (PostgreSQL, Label Studio, the agreement service), brought up with
``podman-here compose``: docker/docker-compose.yml with tests/containers/compose.podman.yml over it, which builds
PostgreSQL and Label Studio here (no registry is reachable) and puts every service on the host's loopback.

podman 4.3 runs health checks only from systemd timers, which these machines lack, and podman-compose ignores
``condition: service_healthy`` before podman 4.6; so the test runs each container's own health check itself
(``podman healthcheck run``) and starts the agreement service once Label Studio is healthy, as the compose file's
comment tells teams to.
"""

from __future__ import annotations

import os
import sys
import time
import uuid

import pytest
import requests
from label_studio_sdk import LabelStudio

from plugin.labelstudio.localserver import ADMIN_TOKEN, free_port, sign_up
from tests.containers.conftest import (
    LABEL_STUDIO_VERSION,
    ROOT,
    SECRET,
    image_exists,
    podman,
    podman_here,
    wait_for,
)

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices></View>"""
POSTGRES_IMAGE = "localhost/ls-agreement-test/postgres:15"
LABEL_STUDIO_IMAGE = f"localhost/ls-agreement-test/label-studio:{LABEL_STUDIO_VERSION}"
HERE = ROOT / "tests" / "containers"


def choice(value):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [value]}}]


@pytest.fixture(scope="module")
def local_images():
    """PostgreSQL and Label Studio built from the stand-in base; kept between runs on the same machine."""
    built = {}
    for image, dockerfile, args in ((POSTGRES_IMAGE, "postgres.Dockerfile", ()),
                                    (LABEL_STUDIO_IMAGE, "label-studio.Dockerfile",
                                     ("--build-arg", f"LABEL_STUDIO_VERSION={LABEL_STUDIO_VERSION}"))):
        if not image_exists(image):
            started = time.monotonic()
            podman_here("build", "--format", "docker", *args, "-f", str(HERE / dockerfile), "-t", image, str(HERE))
            built[image] = time.monotonic() - started
    return built


class Stack:
    def __init__(self, tmp_path):
        self.project = f"lsa-test-{uuid.uuid4().hex[:8]}"
        self.ports = {"POSTGRES_PORT": free_port(), "LABEL_STUDIO_PORT": free_port(), "AGREEMENT_PORT": free_port()}
        env_file = tmp_path / "stack.env"  # not the user's docker/.env
        env_file.write_text("")
        self.env = {
            **{name: str(port) for name, port in self.ports.items()},
            "LABEL_STUDIO_CONTAINER_PORT": str(self.ports["LABEL_STUDIO_PORT"]),
            "AGREEMENT_CONTAINER_PORT": str(self.ports["AGREEMENT_PORT"]),
            "POSTGRES_PASSWORD": uuid.uuid4().hex, "LABEL_STUDIO_PASSWORD": "admin-" + uuid.uuid4().hex[:12],
            "LABEL_STUDIO_API_KEY": ADMIN_TOKEN, "AGREEMENT_WEBHOOK_SECRET": SECRET, "AGREEMENT_PROJECTS": "1",
            "AGREEMENT_RECONCILE_INTERVAL": "30", "LABEL_STUDIO_VERSION": LABEL_STUDIO_VERSION,
            # podman-compose from this environment (the test extras install it).
            "PATH": f"{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}",
        }
        self.base = ["compose", "--env-file", str(env_file), "--in-pod", "false", "-p", self.project,
                     "-f", str(ROOT / "docker" / "docker-compose.yml"), "-f", str(HERE / "compose.podman.yml")]
        self.url = f"http://127.0.0.1:{self.ports['LABEL_STUDIO_PORT']}"
        self.service_url = f"http://127.0.0.1:{self.ports['AGREEMENT_PORT']}"

    def compose(self, *args, timeout=600):
        return podman_here(*self.base, *args, env=self.env, timeout=timeout)

    def container(self, service):
        names = podman("ps", "-a", "--filter", f"label=io.podman.compose.project={self.project}",
                       "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}").stdout
        assert names.split(), f"no container for {service}"
        return names.split()[0]

    def healthy(self, service):
        return podman("healthcheck", "run", self.container(service), check=False).returncode == 0

    def wait_healthy(self, *services, timeout=240):
        for service in services:
            wait_for(lambda service=service: self.healthy(service), timeout, f"{service} to be healthy", interval=2)

    def remove(self):
        """Everything the stack made: containers, volumes, networks; also after a failure half-way."""
        try:
            self.compose("down", "--volumes", "--timeout", "10", timeout=180)
        except AssertionError:
            pass
        label = f"label=io.podman.compose.project={self.project}"
        for kind, listing in (("container", ["ps", "-a"]), ("volume", ["volume", "ls"])):
            found = podman(*listing, "--filter", label, "--format", "{{.Names}}" if kind == "container" else
                           "{{.Name}}", check=False).stdout.split()
            for name in found:
                podman(kind, "rm", "--force", name, check=False)
        for name in podman("volume", "ls", "--format", "{{.Name}}", check=False).stdout.split():
            if name.startswith(self.project + "_"):
                podman("volume", "rm", "--force", name, check=False)


@pytest.fixture(scope="module")
def stack(agreement_image, local_images, tmp_path_factory):
    stack = Stack(tmp_path_factory.mktemp("stack"))
    yield stack
    stack.remove()
    assert not podman("ps", "-a", "--filter", f"label=io.podman.compose.project={stack.project}",
                      "--format", "{{.Names}}").stdout.split()


def status(stack, project):
    answer = requests.get(f"{stack.service_url}/status", headers={"X-Agreement-Secret": SECRET}, timeout=5)
    return answer.json()["projects"][str(project)]


def test_the_stack_comes_up_scores_and_keeps_everything_across_down_and_up(stack, record_property):
    started = time.monotonic()
    stack.compose("up", "-d", "--no-build", "db", "label-studio")
    stack.wait_healthy("db", "label-studio")
    label_studio_healthy = time.monotonic() - started
    admin = LabelStudio(base_url=stack.url, api_key=ADMIN_TOKEN)
    project = admin.projects.create(title="stack", label_config=CONFIG)
    assert project.id == 1  # AGREEMENT_PROJECTS
    admin.projects.import_tasks(id=project.id, request=[{"data": {"text": f"t{i}"}, "meta": {"origin": i}}
                                                        for i in range(3)])
    tasks = sorted(t.id for t in admin.tasks.list(project=project.id, page_size=10))
    users = [LabelStudio(base_url=stack.url, api_key=sign_up(stack.url, f"s{i}@example.com")[1]) for i in range(2)]

    stack.compose("up", "-d", "--no-build", "agreement")
    stack.wait_healthy("agreement", timeout=120)
    all_healthy = time.monotonic() - started
    record_property("label_studio_healthy_s", round(label_studio_healthy, 1))
    record_property("stack_healthy_s", round(all_healthy, 1))
    print(f"\nstack: db and Label Studio healthy after {label_studio_healthy:.1f} s, all three {all_healthy:.1f} s")
    wait_for(lambda: status(stack, project.id)["passes"] >= 1, 60, "the service's first pass")

    users[0].annotations.create(id=tasks[0], result=choice("pos"))
    users[1].annotations.create(id=tasks[0], result=choice("neg"))
    users[0].annotations.create(id=tasks[1], result=choice("pos"))
    users[1].annotations.create(id=tasks[1], result=choice("pos"))
    meta = lambda task: admin.tasks.get(id=str(task)).meta
    wait_for(lambda: (m := meta(tasks[0]).get("agreement")) and m["n_annotations"] == 2 and m["flagged"], 30,
             "the disagreeing task's meta")
    wait_for(lambda: (m := meta(tasks[1]).get("agreement")) and m["n_annotations"] == 2 and not m["flagged"], 30,
             "the agreeing task's meta")
    tab = next(v for v in admin.views.list(project=project.id) if (v.data or {}).get("title") == "Low agreement")
    assert [t.id for t in admin.tasks.list(project=project.id, view=tab.id, page_size=10)] == [tasks[0]]
    # A task's alpha moves with the project's expected disagreement (task 0's, once task 1 agreed: D_o = 1,
    # D_e = 2*3*1/(4*3) = 0.5, alpha -1); that drift alone is no change a reviewer acts on, so the next pass leaves
    # task 0's meta as its event wrote it, and /status gives the project's alpha as of now.
    written = meta(tasks[0])["agreement"]
    passes = status(stack, project.id)["passes"]
    wait_for(lambda: (s := status(stack, project.id))["passes"] > passes and not s["pending_writes"], 90,
             "a full pass and its writes")
    # as its event wrote it (0 if task 1 had no annotation yet, else -1), or -1 if a refit moved its consensus label
    assert written["alpha"] in (pytest.approx(0.0), pytest.approx(-1.0))
    assert meta(tasks[0])["agreement"]["alpha"] in (pytest.approx(written["alpha"]), pytest.approx(-1.0))
    before = {task: meta(task) for task in tasks}
    wait_for(lambda: status(stack, project.id)["saved_state"].get("saved", {}).get("n_tasks") == 3, 30,
             "the project's state saved")

    # down and up again: the volumes keep the database, Label Studio's data and the project's saved state.
    stack.compose("down", "--timeout", "20")
    assert not podman("ps", "-a", "--filter", f"label=io.podman.compose.project={stack.project}",
                      "--format", "{{.Names}}").stdout.split()
    restarted = time.monotonic()
    stack.compose("up", "-d", "--no-build", "db", "label-studio")
    stack.wait_healthy("db", "label-studio")
    stack.compose("up", "-d", "--no-build", "agreement")
    stack.wait_healthy("agreement", timeout=120)
    record_property("stack_rehealthy_s", round(time.monotonic() - restarted, 1))
    print(f"stack: healthy again {time.monotonic() - restarted:.1f} s after up on the kept volumes")
    assert {task: meta(task) for task in tasks} == before
    assert len(admin.annotations.list(id=tasks[0])) == 2
    assert any((v.data or {}).get("title") == "Low agreement" for v in admin.views.list(project=project.id))
    # The service picks up where it was: its state restored, it reads only what changed, and a new annotation
    # still reaches meta.
    wait_for(lambda: status(stack, project.id)["passes"] >= 1, 60, "the restarted service's first pass")
    restarted_status = status(stack, project.id)
    assert restarted_status["saved_state"]["restored"]["n_tasks"] == 3, restarted_status["saved_state"]
    assert restarted_status["last_pass"]["kind"] == "changed"
    users[1].annotations.create(id=tasks[2], result=choice("neg"))
    users[0].annotations.create(id=tasks[2], result=choice("neg"))
    wait_for(lambda: (m := meta(tasks[2]).get("agreement")) and m["n_annotations"] == 2, 30,
             "a new task's meta after the restart")
