"""deploy/kubernetes/: the manifests validate against Kubernetes' schemas and fit together.

No cluster runs here: built-in kinds are checked with kubernetes-validate (strict: an unknown field fails), the
Prometheus Operator's kinds (no schema ships for them) by their fields, and the rest by reading the manifests
together: what the pods run, where their secrets come from, and how the Services, the disruption budget and the
ServiceMonitor find them.
"""

import re

import pytest
import yaml

from plugin.cli import _shard, build_parser
from plugin.service.settings import ServiceSettings
from tests.deploy.kubernetes import KUBERNETES, PROMETHEUS_RULE, RULES, manifests, prometheus_rule_text
from tests.deploy.dashboard import ROOT

CUSTOM_KINDS = {"ServiceMonitor", "PrometheusRule"}  # monitoring.coreos.com/v1: CRDs, no schema to validate with
NOT_RESOURCES = {"Kustomization"}
FILES = manifests()
KUSTOMIZATION = FILES["kustomization.yaml"][0]
BY_KIND = {}
for _name, _documents in FILES.items():
    for _document in _documents:
        BY_KIND.setdefault(_document["kind"], []).append(_document)
(STATEFULSET,) = BY_KIND["StatefulSet"]
POD = STATEFULSET["spec"]["template"]["spec"]
(CONTAINER,) = POD["containers"]
ENV = {variable["name"]: variable for variable in CONTAINER["env"]}
SERVICES = {service["metadata"]["name"]: service for service in BY_KIND["Service"]}


def _built_in():
    return [(name, document) for name, documents in FILES.items() for document in documents
            if document["kind"] not in CUSTOM_KINDS | NOT_RESOURCES]


@pytest.mark.parametrize(("name", "document"), _built_in(), ids=lambda value: value if isinstance(value, str) else "")
def test_every_built_in_manifest_validates_strictly(name, document):
    kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is in the test "
                                                                            "extras: pip install -e '.[test]'")
    for version in ("1.27.0", "1.28.0", kubernetes_validate.latest_version()):  # before and after the pod-index label
        kubernetes_validate.validate(document, version, strict=True)


def test_the_kustomization_holds_every_manifest_but_the_secret_template():
    assert KUSTOMIZATION["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert set(KUSTOMIZATION["resources"]) == set(FILES) - {"kustomization.yaml", "secret.example.yaml"}
    assert "secretGenerator" not in KUSTOMIZATION and "Secret" not in {
        document["kind"] for name in KUSTOMIZATION["resources"] for document in FILES[name]}
    assert {image["name"] for image in KUSTOMIZATION["images"]} == {CONTAINER["image"].split(":")[0]}


def test_the_statefulset_runs_serve_as_shard_auto_with_n_shards():
    args = build_parser().parse_args(CONTAINER["args"])
    assert args.command == "serve" and args.shard == "auto" and args.host == "0.0.0.0"
    assert int(ENV["AGREEMENT_SHARDS"]["value"]) == STATEFULSET["spec"]["replicas"] >= 1
    assert ENV["AGREEMENT_POD_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == \
        "metadata.labels['apps.kubernetes.io/pod-index']"
    assert ENV["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    # each pod is called back at its own name under the headless Service
    assert STATEFULSET["spec"]["serviceName"] in SERVICES
    assert args.public_url == f"http://$(POD_NAME).{STATEFULSET['spec']['serviceName']}.$(POD_NAMESPACE).svc:" \
                              f"{args.port}"
    assert {"POD_NAME", "POD_NAMESPACE"} <= set(ENV)  # defined, so Kubernetes expands them in the arguments


def test_the_pods_of_the_statefulset_share_the_projects(monkeypatch):
    replicas = STATEFULSET["spec"]["replicas"]
    owners = {}
    for index in range(replicas):
        for variable in ("AGREEMENT_POD_INDEX", "HOSTNAME"):
            monkeypatch.delenv(variable, raising=False)
        monkeypatch.setenv("AGREEMENT_SHARDS", ENV["AGREEMENT_SHARDS"]["value"])
        monkeypatch.setenv("POD_NAME", f"{STATEFULSET['metadata']['name']}-{index}")
        settings = ServiceSettings(projects=(), all_projects=True, public_url="http://x", secret="", connection=None,
                                   shard=_shard(build_parser().parse_args(CONTAINER["args"]).shard))
        for project in range(1, 5 * replicas + 1):
            if settings.owns(project):
                owners.setdefault(project, []).append(index)
    assert all(len(owners.get(project, [])) == 1 for project in range(1, 5 * replicas + 1)), owners


def test_secrets_come_from_the_secret_never_inline():
    (template,) = FILES["secret.example.yaml"]
    secret_name = template["metadata"]["name"]
    for name in ("LABEL_STUDIO_API_KEY", "AGREEMENT_WEBHOOK_SECRET"):
        assert "value" not in ENV[name], name
        reference = ENV[name]["valueFrom"]["secretKeyRef"]
        assert reference["name"] == secret_name and reference["key"] in template["stringData"]
    assert all(value == "" for value in template["stringData"].values())  # the template holds no secret
    for name, documents in FILES.items():  # nothing that looks like a token anywhere
        text = (KUBERNETES / name).read_text()
        assert not re.search(r"\b[0-9a-f]{40}\b", text), name


def test_state_volume_health_probes_and_resources():
    args = build_parser().parse_args(CONTAINER["args"])
    mounts = {mount["name"]: mount["mountPath"] for mount in CONTAINER["volumeMounts"]}
    (claim,) = STATEFULSET["spec"]["volumeClaimTemplates"]
    assert str(args.state_dir) == mounts[claim["metadata"]["name"]] == "/state"
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"] and claim["spec"]["resources"]["requests"]["storage"]
    ports = {port["name"]: port["containerPort"] for port in CONTAINER["ports"]}
    assert ports[CONTAINER["readinessProbe"]["httpGet"]["port"]] == args.port
    for probe in ("readinessProbe", "livenessProbe"):
        assert CONTAINER[probe]["httpGet"]["path"] == "/health", probe  # the one route without the secret
    resources = CONTAINER["resources"]
    assert set(resources["requests"]) == set(resources["limits"]) == {"cpu", "memory"}
    statefulset_text = (KUBERNETES / "statefulset.yaml").read_text()
    assert "KiB a task" in statefulset_text and "100,000 tasks" in statefulset_text  # the size the numbers fit
    assert "KiB a task" in (ROOT / "BENCHMARKS.md").read_text()


def test_the_pods_run_as_the_images_user_on_a_read_only_root():
    uid = int(re.search(r"useradd .*--uid (\d+)", (ROOT / "docker" / "Dockerfile").read_text()).group(1))
    assert POD["securityContext"]["runAsUser"] == uid and POD["securityContext"]["runAsNonRoot"]
    assert POD["securityContext"]["fsGroup"] == uid  # the state volume writable by it
    security = CONTAINER["securityContext"]
    assert security["readOnlyRootFilesystem"] and not security["allowPrivilegeEscalation"]
    assert security["capabilities"]["drop"] == ["ALL"]
    tmp = next(mount for mount in CONTAINER["volumeMounts"] if mount["mountPath"] == "/tmp")
    assert "emptyDir" in next(volume for volume in POD["volumes"] if volume["name"] == tmp["name"])
    assert POD["enableServiceLinks"] is False and POD["automountServiceAccountToken"] is False


def test_services_budget_and_service_monitor_select_the_pods():
    pod_labels = STATEFULSET["spec"]["template"]["metadata"]["labels"]
    assert STATEFULSET["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    headless = SERVICES[STATEFULSET["spec"]["serviceName"]]
    assert headless["spec"]["clusterIP"] == "None" and headless["spec"]["publishNotReadyAddresses"]
    metrics = next(service for service in SERVICES.values()
                   if any(port["name"] == "metrics" for port in service["spec"]["ports"]))
    for service in (headless, metrics):
        assert service["spec"]["selector"].items() <= pod_labels.items()
        container_ports = {port["name"] for port in CONTAINER["ports"]}
        assert all(port["targetPort"] in container_ports for port in service["spec"]["ports"])
    (budget,) = BY_KIND["PodDisruptionBudget"]
    assert budget["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert budget["spec"]["maxUnavailable"] == 1
    (monitor,) = BY_KIND["ServiceMonitor"]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= metrics["metadata"]["labels"].items()
    assert not monitor["spec"]["selector"]["matchLabels"].items() <= headless["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics"
    credentials = endpoint["authorization"]["credentials"]
    assert endpoint["authorization"]["type"] == "Bearer"
    assert credentials == ENV["AGREEMENT_WEBHOOK_SECRET"]["valueFrom"]["secretKeyRef"]  # the service's own secret
    assert {"action": "replace", "targetLabel": "job", "replacement": "agreement"} in endpoint["relabelings"]


def test_the_prometheus_rule_holds_the_same_groups_as_rules_yml():
    (rule,) = BY_KIND["PrometheusRule"]
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"], \
        "deploy/kubernetes/prometheusrule.yaml differs from deploy/prometheus/rules.yml: " \
        "run `.venv/bin/python -m tests.deploy.kubernetes`"
    assert PROMETHEUS_RULE.read_text() == prometheus_rule_text()
