"""deploy/grafana/: the dashboard's JSON, its queries against the metrics contract, and its provisioning."""

import json

import pytest
import yaml

from tests.deploy.dashboard import (
    CONTRACT,
    DASHBOARD,
    ROOT,
    contract_problems,
    dashboard_queries,
    panel_queries,
    panels,
    selectors,
    substitute,
    variable_queries,
)

MODEL = json.loads(DASHBOARD.read_text())


def test_the_dashboard_is_a_grafana_model_with_its_variables():
    assert MODEL["uid"] and MODEL["title"] and isinstance(MODEL["schemaVersion"], int)
    variables = {variable["name"]: variable for variable in MODEL["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource" and variables["DS_PROMETHEUS"]["query"] == "prometheus"
    for name in ("project", "control"):
        assert variables[name]["type"] == "query" and variables[name]["includeAll"]
        assert variables[name]["allValue"] == ".*" and variables[name]["multi"]
    ids = [panel["id"] for panel in panels()]
    assert len(ids) == len(set(ids))


def test_every_panel_has_a_query_on_the_variable_data_source():
    for panel in panels():
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}, panel["title"]
        assert panel["targets"] and all(target.get("expr", "").strip() for target in panel["targets"]), panel["title"]
        assert all(target["datasource"] == panel["datasource"] for target in panel["targets"]), panel["title"]
        assert len({target["refId"] for target in panel["targets"]}) == len(panel["targets"]), panel["title"]


def test_every_query_names_only_metrics_of_the_contract():
    for title, expr in panel_queries():
        assert contract_problems(substitute(expr)) == [], title
        assert all(metric.startswith("ls_agreement_") for metric, _ in selectors(substitute(expr))), title
    for name, selector in variable_queries():
        assert contract_problems(substitute(selector)) == [], name


def test_the_panels_cover_what_issue_51_asks():
    used = {metric.removesuffix("_bucket") for query in dashboard_queries() for metric, _ in selectors(query)}
    asked = {"ls_agreement_agreement", "ls_agreement_threshold", "ls_agreement_annotator_accuracy",
             "ls_agreement_tasks_flagged", "ls_agreement_tasks", "ls_agreement_label_studio_up",
             "ls_agreement_label_studio_requests_total", "ls_agreement_writes_total",
             "ls_agreement_pass_duration_seconds", "ls_agreement_event_to_meta_seconds",
             "ls_agreement_event_queue_seconds", "ls_agreement_event_read_seconds",
             "ls_agreement_event_scoring_seconds", "ls_agreement_event_write_seconds",
             "ls_agreement_saved_state_age_seconds", "ls_agreement_not_scored"}
    assert asked <= used, asked - used
    assert used <= set(CONTRACT)
    p95 = [query for query in dashboard_queries() if "histogram_quantile(0.95" in query and "event_to_meta" in query]
    p50 = [query for query in dashboard_queries() if "histogram_quantile(0.5," in query and "event_to_meta" in query]
    assert p95 and p50


def test_dashboard_queries_substitutes_every_variable():
    every = dashboard_queries()
    assert len(every) == len(panel_queries()) and not any("$" in query for query in every)
    assert any('project=~".*"' in query for query in every)
    some = dashboard_queries(values={"project": ["3", "12"], "control": "sentiment"})
    assert any('project=~"3|12", control=~"sentiment"' in query for query in some)
    with pytest.raises(ValueError, match="unknown variable"):
        substitute("m{a=~\"$team\"}")


def test_the_provisioning_files_point_at_the_dashboards_and_prometheus():
    provisioning = ROOT / "deploy" / "grafana" / "provisioning"
    sources = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())
    (source,) = sources["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "${PROMETHEUS_URL}" and source["isDefault"]
    providers = yaml.safe_load((provisioning / "dashboards" / "dashboards.yml").read_text())
    (provider,) = providers["providers"]
    compose = yaml.safe_load((ROOT / "docker" / "docker-compose.yml").read_text())
    grafana = compose["services"]["grafana"]
    # the compose file mounts the dashboards where the provider reads them, and names Prometheus for the source
    assert f"../deploy/grafana/dashboards:{provider['options']['path']}:ro" in grafana["volumes"]
    assert "../deploy/grafana/provisioning:/etc/grafana/provisioning:ro" in grafana["volumes"]
    assert grafana["environment"]["PROMETHEUS_URL"] == "http://prometheus:9090"
