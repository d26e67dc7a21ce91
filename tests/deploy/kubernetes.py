"""deploy/kubernetes/: its manifests read as documents, and its PrometheusRule written from the rules.

``python -m tests.deploy.kubernetes`` writes deploy/kubernetes/prometheusrule.yaml again from
deploy/prometheus/rules.yml (comments kept), after a change to the rules; tests/deploy/test_kubernetes.py checks
that the two hold the same groups.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
RULES = ROOT / "deploy" / "prometheus" / "rules.yml"
PROMETHEUS_RULE = KUBERNETES / "prometheusrule.yaml"

HEADER = """\
# For the Prometheus Operator: the alert rules of deploy/prometheus/rules.yml, the same group (a test compares them).
# Written by `python -m tests.deploy.kubernetes` from that file: change the rules there, then run it.
# The Prometheus resource selects rules by label (kube-prometheus-stack: `release: <its release>` unless
# ruleSelectorNilUsesHelmValues is false): add that label here if yours needs it.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: agreement
  labels:
    app.kubernetes.io/name: label-studio-agreement
    app.kubernetes.io/component: metrics
spec:
"""


def documents(path: Path) -> list[dict[str, Any]]:
    """The YAML documents of one manifest file (empty ones left out)."""
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


def manifests() -> dict[str, list[dict[str, Any]]]:
    """Every manifest file of deploy/kubernetes/ by name, with its documents (the kustomization's included)."""
    return {path.name: documents(path) for path in sorted(KUBERNETES.glob("*.yaml"))}


def prometheus_rule_text(rules: str | None = None) -> str:
    """deploy/kubernetes/prometheusrule.yaml as written from rules.yml's text: its ``groups`` under ``spec``."""
    text = RULES.read_text() if rules is None else rules
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("groups:"))
    return HEADER + "\n".join(f"  {line}" if line.strip() else "" for line in lines[start:]) + "\n"


if __name__ == "__main__":
    PROMETHEUS_RULE.write_text(prometheus_rule_text())
    print(f"wrote {PROMETHEUS_RULE.relative_to(ROOT)}")
