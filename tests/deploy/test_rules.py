"""deploy/prometheus/: the alert rules pass promtool's checks and unit tests, and keep to the metrics contract."""

import shutil
import subprocess

import pytest
import yaml

from tests.deploy.dashboard import ROOT, contract_problems

PROMETHEUS = ROOT / "deploy" / "prometheus"
RULES = yaml.safe_load((PROMETHEUS / "rules.yml").read_text())
ALERTS = [rule for group in RULES["groups"] for rule in group["rules"]]
TESTS = yaml.safe_load((PROMETHEUS / "rules.test.yml").read_text())
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool is missing: `make test` installs Debian's "
                                                              "prometheus package (apt-get install prometheus)")


def promtool(*args):
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120, cwd=PROMETHEUS,
                          check=False)


@needs_promtool
def test_promtool_checks_the_rules():
    done = promtool("check", "rules", "rules.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(ALERTS)} rules found" in done.stdout


@needs_promtool
def test_promtool_unit_tests_pass():
    done = promtool("test", "rules", "rules.test.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


@needs_promtool
def test_the_scrape_config_is_valid(tmp_path):
    # the config as the compose file mounts it, with its secret file and rules where it expects them
    secret = tmp_path / "agreement.secret"
    secret.write_text("a-secret-for-promtool-check-0")
    config = (PROMETHEUS / "prometheus.yml").read_text()
    config = config.replace("/etc/prometheus/agreement.secret", str(secret))
    config = config.replace("/etc/prometheus/rules/*.yml", str(PROMETHEUS / "rules.yml"))
    (tmp_path / "prometheus.yml").write_text(config)
    done = promtool("check", "config", str(tmp_path / "prometheus.yml"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_rule_says_how_long_how_bad_and_what_in_words():
    assert len(RULES["groups"]) == 1 and len(ALERTS) >= 11
    for rule in ALERTS:
        assert set(rule) == {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        assert rule["annotations"]["summary"].strip() and len(rule["annotations"]["description"]) > 80, rule["alert"]
        # a project's alert names it
        if "project" in rule["expr"] and "by (project" in rule["expr"]:
            assert "{{ $labels.project }}" in rule["annotations"]["summary"], rule["alert"]


def test_every_rule_keeps_to_the_metrics_contract():
    for rule in ALERTS:
        assert contract_problems(rule["expr"]) == [], rule["alert"]


def test_every_rule_has_a_case_that_fires_and_one_that_does_not():
    cases = {}
    for test in TESTS["tests"]:
        for case in test.get("alert_rule_test", []):
            cases.setdefault(case["alertname"], set()).add(bool(case.get("exp_alerts")))
    assert {rule["alert"]: {True, False} for rule in ALERTS} == cases


def test_the_measure_compared_with_the_threshold_is_spa():
    # the threshold is on SPA's scale (a task is flagged when its SPA is below it): docs/sync.md, "Flags"
    below = next(rule for rule in ALERTS if rule["alert"] == "AgreementBelowThreshold")
    assert 'measure="spa"' in below["expr"] and "ls_agreement_threshold" in below["expr"]
