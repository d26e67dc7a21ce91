"""The service's image, built with podman and run against a real Label Studio on loopback."""

from __future__ import annotations

import json
import time
import uuid

import pytest
import requests
from label_studio_sdk import LabelStudio

from plugin.labelstudio.localserver import free_port, sign_up
from tests.containers.conftest import SECRET, podman, podman_here, wait_for

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices></View>"""


def choice(value):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [value]}}]


@pytest.fixture
def service(agreement_image):
    """Start containers of the image; each is removed when the test ends, whatever happened."""
    names = []

    def start(label_studio_url, token, project, *extra, run_options=()):
        name, port = f"ls-agreement-test-{uuid.uuid4().hex[:8]}", free_port()
        names.append(name)
        podman_here("run", "-d", "--name", name, *run_options, "--env", f"LABEL_STUDIO_URL={label_studio_url}",
                    "--env", f"AGREEMENT_HEALTH_URL=http://127.0.0.1:{port}/health",
                    "--env", f"LABEL_STUDIO_API_KEY={token}", "--env", f"AGREEMENT_WEBHOOK_SECRET={SECRET}",
                    agreement_image, "serve", "--host", "127.0.0.1", "--port", str(port), "--project", str(project),
                    *extra)
        return name, f"http://127.0.0.1:{port}"

    yield start
    for name in names:
        podman("rm", "--force", "--time", "0", name, check=False)


def health(url):
    try:
        return requests.get(f"{url}/health", timeout=2).status_code
    except requests.RequestException:
        return None


def image_health_check(image):
    """The image's HEALTHCHECK (kept in docker format only)."""
    inspected = json.loads(podman("image", "inspect", image).stdout)[0]
    return inspected.get("Healthcheck") or inspected["Config"].get("Healthcheck")


def inspect(name, template):
    return podman("inspect", "--format", template, name).stdout.strip()


def test_the_image_is_non_root_keeps_its_health_check_and_holds_no_secret_or_compiler(agreement_image):
    image = json.loads(podman("image", "inspect", agreement_image).stdout)[0]
    config = image["Config"]
    assert config["User"] == "agreement"
    check = image_health_check(agreement_image)
    assert check and "AGREEMENT_HEALTH_URL" in " ".join(check["Test"])
    assert "AGREEMENT_HEALTH_URL=http://127.0.0.1:9090/health" in config["Env"]
    assert config["Entrypoint"] == ["ls-agreement"]
    names = {entry.split("=", 1)[0] for entry in config["Env"]}
    assert not names & {"LABEL_STUDIO_API_KEY", "AGREEMENT_WEBHOOK_SECRET", "LABEL_STUDIO_PASSWORD"}
    probe = podman_here("run", "--rm", "--entrypoint", "sh", agreement_image, "-c",
                        "id -u; command -v gcc cc make || true; ls -A /app; ls -A ~/.cache 2>/dev/null || true;"
                        "python -c 'import pytest' 2>/dev/null && echo pytest || true")
    assert probe.stdout.split() == ["10001"], probe.stdout  # no compiler, no sources, no cache, no test extras


def test_serve_in_the_container_keeps_meta_current(label_studio, service):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="container", label_config=CONFIG)
    admin.projects.import_tasks(id=project.id, request=[{"data": {"text": f"t{i}"}, "meta": {"origin": i}}
                                                        for i in range(3)])
    tasks = sorted(t.id for t in admin.tasks.list(project=project.id, page_size=10))
    users = [LabelStudio(base_url=label_studio.url, api_key=sign_up(label_studio.url, f"c{i}@example.com")[1])
             for i in range(2)]
    name, url = service(label_studio.url, label_studio.token, project.id)
    wait_for(lambda: health(url) == 200, 90, "the service's /health")
    wait_for(lambda: podman("healthcheck", "run", name, check=False).returncode == 0, 30, "the image's health check")
    status = lambda: requests.get(f"{url}/status", headers={"X-Agreement-Secret": SECRET},
                                  timeout=5).json()["projects"][str(project.id)]
    wait_for(lambda: status()["passes"] >= 1, 60, "the first pass")

    users[0].annotations.create(id=tasks[0], result=choice("pos"))
    users[1].annotations.create(id=tasks[0], result=choice("neg"))
    meta = lambda task: admin.tasks.get(id=str(task)).meta
    block = wait_for(lambda: (m := meta(tasks[0]).get("agreement")) and m["n_annotations"] == 2 and m, 30,
                     "the task's meta after two annotations")
    assert block["controls"]["sentiment"]["spa"] == 0.0 and block["flagged"]
    assert meta(tasks[0])["origin"] == 0  # merged, not replaced
    created = users[1].annotations.create(id=tasks[1], result=choice("pos"))
    users[0].annotations.create(id=tasks[1], result=choice("pos"))
    wait_for(lambda: (m := meta(tasks[1]).get("agreement")) and m["controls"]["sentiment"]["spa"] == 1.0, 30,
             "the second task's meta")
    users[1].annotations.update(id=created.id, result=choice("neg"))
    wait_for(lambda: meta(tasks[1])["agreement"]["controls"]["sentiment"]["spa"] == 0.0, 30, "the edited meta")
    logs = podman("logs", name).stdout + podman("logs", name).stderr
    assert SECRET not in logs and label_studio.token not in logs


def test_the_health_check_turns_unhealthy_when_label_studio_is_gone(agreement_image, label_studio, service):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="health", label_config=CONFIG)
    # The image's own check command, with a start period of 1 s instead of its 60 s (failures during one do not
    # count). podman 4.3 keeps the image's timings unless the command is given too.
    kind, command = image_health_check(agreement_image)["Test"]
    assert kind == "CMD-SHELL"
    name, url = service(label_studio.url, label_studio.token, project.id, "--reconcile-interval", "2",
                        "--unhealthy-after", "8",
                        run_options=("--health-cmd", command, "--health-start-period", "1s", "--health-retries", "3"))
    wait_for(lambda: health(url) == 200, 90, "the service's /health")
    assert podman("healthcheck", "run", name, check=False).returncode == 0
    label_studio.stop()
    stopped = time.monotonic()
    # No systemd here to run the checks on a timer: the test runs them. Three failures in a row (the image's
    # --retries) make the container unhealthy.
    wait_for(lambda: podman("healthcheck", "run", name, check=False).returncode != 0, 60, "a failing health check")
    assert time.monotonic() - stopped >= 8 - 2  # not before --unhealthy-after (less the first failed pass's age)
    for _ in range(3):
        podman("healthcheck", "run", name, check=False)
    assert inspect(name, "{{.State.Health.Status}}") == "unhealthy"
    assert health(url) == 503 and inspect(name, "{{.State.Status}}") == "running"


def test_sigterm_stops_the_service_cleanly_within_seconds(label_studio, service):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="stop", label_config=CONFIG)
    name, url = service(label_studio.url, label_studio.token, project.id)
    wait_for(lambda: health(url) == 200, 90, "the service's /health")
    started = time.monotonic()
    podman("stop", "--time", "30", name)  # SIGTERM, then SIGKILL after 30 s
    took = time.monotonic() - started
    assert took < 10, f"the service took {took:.1f} s to stop"
    assert inspect(name, "{{.State.ExitCode}}") == "0"  # ended by itself, not killed (137)
    assert "Finished server process" in podman("logs", name).stderr + podman("logs", name).stdout
