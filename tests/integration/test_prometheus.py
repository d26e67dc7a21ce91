"""A real Prometheus (Debian's package) scraping ``ls-agreement serve`` with its own ``authorization`` setting, the
service watching a real Label Studio: the alert on low agreement fires as annotators disagree and resolves as they
agree again, every query of the Grafana dashboard returns a series, and the alert on an annotator's accuracy names
only those with enough answers."""

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests
import yaml
from label_studio_sdk import LabelStudio

from plugin.labelstudio.localserver import free_port, sign_up
from tests.deploy.dashboard import dashboard_queries
from tests.integration.test_serve import SECRET, start_service, status_of, stop, wait_for

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "rules.yml"
CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices></View>"""
PROMETHEUS = shutil.which("prometheus")

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus package is not installed "
                                                           "(make test installs it)")


def choice(value):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [value]}}]


def quick_rules(folder):
    """The rules as shipped, evaluated every second and firing after 2 s rather than after their ``for:``."""
    rules = yaml.safe_load(RULES.read_text())
    for group in rules["groups"]:
        group["interval"] = "1s"
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = "2s"
    path = folder / "rules.yml"
    path.write_text(yaml.safe_dump(rules))
    return path


@pytest.fixture(scope="module")
def watched(label_studio, tmp_path_factory):
    """A project in Label Studio, the service on it, and Prometheus scraping the service every second."""
    folder = tmp_path_factory.mktemp("prometheus")
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="watched", label_config=CONFIG).id
    admin.projects.import_tasks(id=project, request=[{"data": {"text": f"review {i}"}} for i in range(28)])
    tasks = sorted(t.id for t in admin.tasks.list(project=project, page_size=100))
    users = [LabelStudio(base_url=label_studio.url, api_key=sign_up(label_studio.url, f"watch{i}@example.com")[1])
             for i in range(2)]
    log = open(folder / "service.log", "wb")  # noqa: SIM115 (closed at the end of the module)
    service, url = start_service(label_studio.url, label_studio.token, project, free_port(), log,
                                 "--reconcile-interval", "2", "--state-dir", str(folder / "state"))
    port = free_port()
    (folder / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(quick_rules(folder))],
        "scrape_configs": [{"job_name": "agreement", "metrics_path": "/metrics",
                            "authorization": {"credentials": SECRET},  # sent as Authorization: Bearer <secret>
                            "static_configs": [{"targets": [url.removeprefix("http://")]}]}],
    }))
    prometheus = subprocess.Popen([PROMETHEUS, f"--config.file={folder / 'prometheus.yml'}",
                                   f"--storage.tsdb.path={folder / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                                   "--log.level=warn"], stdout=log, stderr=subprocess.STDOUT)
    api = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _ready(api), timeout=30)
        yield {"users": users, "tasks": tasks, "project": project, "api": api, "url": url, "admin": admin}
    finally:
        stop(prometheus)
        stop(service)
        log.close()


def _ready(api):
    try:
        return requests.get(f"{api}/-/ready", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def query(api, expr):
    answer = requests.get(f"{api}/api/v1/query", params={"query": expr}, timeout=5).json()
    assert answer["status"] == "success", (expr, answer)
    return answer["data"]["result"]


def alert_state(api, name, project):
    for alert in requests.get(f"{api}/api/v1/alerts", timeout=5).json()["data"]["alerts"]:
        if alert["labels"]["alertname"] == name and alert["labels"].get("project") == str(project):
            return alert["state"], alert
    return None, None


def annotate(watched, tasks, *, agree):
    first, second = watched["users"]
    for task in tasks:
        first.annotations.create(id=task, result=choice("pos"))
        second.annotations.create(id=task, result=choice("pos" if agree else "neg"))


def spa_now(watched):
    return status_of(watched["url"], watched["project"])["controls"]["sentiment"]["spa"]


def test_prometheus_scrapes_the_service_with_its_bearer_setting(watched):
    api = watched["api"]
    targets = wait_for(lambda: [t for t in requests.get(f"{api}/api/v1/targets", timeout=5).json()["data"]
                                ["activeTargets"] if t["health"] == "up"], timeout=20)
    assert targets[0]["labels"]["job"] == "agreement" and targets[0]["lastError"] == ""
    [info] = wait_for(lambda: query(api, "ls_agreement_build_info"), timeout=10)
    assert info["metric"]["version"] and info["value"][1] == "1"


def test_the_low_agreement_alert_fires_as_annotators_disagree_and_resolves_as_they_agree(watched):
    api, project, tasks = watched["api"], watched["project"], watched["tasks"]
    annotate(watched, tasks[:4], agree=True)
    wait_for(lambda: spa_now(watched) == 1.0, timeout=20)
    time.sleep(4)  # two evaluations past for: with agreement at 1.0: nothing pending, nothing firing
    assert alert_state(api, "AgreementBelowThreshold", project)[0] is None

    annotate(watched, tasks[4:12], agree=False)  # SPA 4/12: below the threshold of 0.5
    wait_for(lambda: spa_now(watched) == pytest.approx(1 / 3), timeout=30)
    # firing, at the service's SPA as Prometheus scraped it (the value of the alert's latest evaluation)
    state, alert = wait_for(lambda: (found := alert_state(api, "AgreementBelowThreshold", project))[0] == "firing"
                            and float(found[1]["value"]) == pytest.approx(1 / 3, abs=1e-6) and found, timeout=30)
    assert alert["labels"]["control"] == "sentiment" and alert["labels"]["severity"] == "warning"
    assert f"Project {project}" in alert["annotations"]["summary"]

    annotate(watched, tasks[12:24], agree=True)  # SPA 16/24: above it again
    wait_for(lambda: spa_now(watched) == pytest.approx(2 / 3), timeout=30)
    wait_for(lambda: alert_state(api, "AgreementBelowThreshold", project)[0] is None, timeout=30)


def test_every_dashboard_query_returns_a_series(watched):
    api = watched["api"]
    annotate(watched, watched["tasks"][24:28], agree=True)  # events of its own: the latency panels' rates
    wait_for(lambda: query(api, "ls_agreement_saved_state_age_seconds"), timeout=30)  # a pass saved the state
    time.sleep(3)  # a few scrapes since those events: rates over them have two samples
    empty = [expr for expr in dashboard_queries(values={"project": str(watched["project"]), "control": "sentiment"})
             if not query(api, expr)]
    assert empty == []


def test_the_accuracy_alert_names_only_annotators_with_enough_answers(watched):
    # the shipped AnnotatorAccuracyLow expression, on the series Prometheus scraped, with its thresholds moved so
    # that every accuracy qualifies (< 1.01) and only the count of answers decides
    api, project = watched["api"], watched["project"]
    left = [t.id for t in watched["admin"].tasks.list(project=project, page_size=100) if not t.total_annotations]
    annotate(watched, left, agree=True)  # every task answered by both: 28 answers each
    wait_for(lambda: set(status_of(watched["url"], project)["controls"]["sentiment"]["consensus"]["n_answers"]
                         .values()) == {28}, timeout=30)
    shown = status_of(watched["url"], project)["controls"]["sentiment"]["consensus"]
    assert shown["n_answers"].keys() == shown["accuracy"].keys() == {"watch0@example.com", "watch1@example.com"}
    expr = next(rule["expr"] for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]
                if rule.get("alert") == "AnnotatorAccuracyLow")
    assert "< 0.6" in expr and ">= 20" in expr

    def named(answers):
        return {s["metric"]["annotator"] for s in query(api, expr.replace("< 0.6", "< 1.01").replace(
            ">= 20", f">= {answers}"))}

    def scraped():
        return {s["metric"]["annotator"]: float(s["value"][1])
                for s in query(api, f'ls_agreement_annotator_answers{{project="{project}"}}')}

    wait_for(lambda: len(scraped()) == 2 and set(scraped().values()) == {28.0}, timeout=30)
    assert named(28) == set(scraped()) and named(29) == set()
