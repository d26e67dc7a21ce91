"""The dashboard's and the rules' queries, and the metrics contract they are checked against.

:func:`dashboard_queries` gives every PromQL query of deploy/grafana/dashboards/label-studio-agreement.json with
its template variables substituted, ready to send to a real Prometheus (``/api/v1/query``): the unit tests check
them against the contract here, and a test against a real Prometheus can run them as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "label-studio-agreement.json"

# The /metrics contract (issue 51's spec, as plugin/service/metrics.py serves it): each metric's type and labels.
# Metric names and labels are fixed by it; a query naming anything else would never return a series.
CONTRACT: dict[str, tuple[str, frozenset[str]]] = {
    name: (kind, frozenset(labels)) for name, kind, labels in [
        ("ls_agreement_build_info", "gauge", ["version", "python"]),
        ("ls_agreement_shard_info", "gauge", ["shard", "shards"]),
        ("ls_agreement_project_owned", "gauge", ["project"]),
        ("ls_agreement_project_seen", "gauge", ["project"]),
        ("ls_agreement_agreement", "gauge", ["project", "control", "measure"]),
        ("ls_agreement_agreement_ci_lower", "gauge", ["project", "control", "measure"]),
        ("ls_agreement_agreement_ci_upper", "gauge", ["project", "control", "measure"]),
        ("ls_agreement_threshold", "gauge", ["project", "control"]),
        ("ls_agreement_items", "gauge", ["project", "control"]),
        ("ls_agreement_annotations", "gauge", ["project", "control"]),
        ("ls_agreement_not_scored", "gauge", ["project", "control"]),
        ("ls_agreement_tasks", "gauge", ["project"]),
        ("ls_agreement_tasks_scored", "gauge", ["project"]),
        ("ls_agreement_tasks_flagged", "gauge", ["project"]),
        ("ls_agreement_annotator_accuracy", "gauge", ["project", "control", "annotator"]),
        ("ls_agreement_annotator_answers", "gauge", ["project", "control", "annotator"]),
        ("ls_agreement_annotators", "gauge", ["project", "control"]),
        ("ls_agreement_skipped_results", "gauge", ["project", "reason"]),
        ("ls_agreement_event_to_meta_seconds", "histogram", ["project"]),
        ("ls_agreement_event_queue_seconds", "histogram", ["project"]),
        ("ls_agreement_event_read_seconds", "histogram", ["project"]),
        ("ls_agreement_event_scoring_seconds", "histogram", ["project"]),
        ("ls_agreement_event_write_seconds", "histogram", ["project"]),
        ("ls_agreement_passes_total", "counter", ["project", "kind"]),
        ("ls_agreement_pass_duration_seconds", "histogram", ["project"]),
        ("ls_agreement_last_pass_timestamp_seconds", "gauge", ["project"]),
        ("ls_agreement_label_studio_requests_total", "counter", ["outcome"]),
        ("ls_agreement_label_studio_up", "gauge", []),
        ("ls_agreement_writes_total", "counter", ["outcome"]),
        ("ls_agreement_saved_state_age_seconds", "gauge", ["project"]),
        ("ls_agreement_reconcile_interval_seconds", "gauge", []),
    ]
}
MEASURES = frozenset({"spa", "alpha", "ac1", "ac2", "f1_exact", "f1_overlap"})
# What a scrape adds to every series (job, instance; in Kubernetes the ServiceMonitor's namespace, pod, service,
# endpoint; the compose scrape's service), and Prometheus's own `up` of each target.
TARGET_LABELS = frozenset({"job", "instance", "namespace", "pod", "service", "endpoint", "container"})
PROMETHEUS_OWN = {"up": ("gauge", frozenset())}

# Grafana's own variables, as a query sent straight to Prometheus needs them.
BUILT_INS = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}

_TOKEN = re.compile(r"""
    (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<braces>\{[^}]*\})
  | (?P<brackets>\[[^\]]*\])
  | (?P<number>(?:\d+[smhdwy])+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0x[0-9a-fA-F]+)
  | (?P<name>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<open>\()
  | (?P<close>\))
  | (?P<other>\S)
""", re.VERBOSE)
_MATCHER = re.compile(r"""\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*,?""")
_AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk",
                 "quantile", "limitk", "limit_ratio"}
_GROUPINGS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
_KEYWORDS = {"and", "or", "unless", "offset", "bool", "atan2", "inf", "nan"}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)")


def selectors(expr: str) -> Iterator[tuple[str, dict[str, tuple[str, str]]]]:
    """Every metric a PromQL expression selects, with its label matchers (``{label: (operator, value)}``).

    >>> list(selectors('sum by (le) (rate(m_bucket{project=~"3|4"}[5m])) > on() group_left max(n offset 1d)'))
    [('m_bucket', {'project': ('=~', '3|4')}), ('n', {})]

    Raises
    ------
    ValueError
        For a selector by ``{__name__=...}`` alone, which this reading does not follow.
    """
    tokens = [(match.lastgroup, match.group()) for match in _TOKEN.finditer(expr)]
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        following = tokens[i + 1] if i + 1 < len(tokens) else (None, "")
        if kind == "braces":
            raise ValueError(f"a selector without a metric name: {text} in {expr!r}")
        if kind != "name":
            i += 1
            continue
        lowered = text.lower()
        if lowered in _GROUPINGS and following[0] == "open":  # its label list, not metrics
            depth, i = 0, i + 1
            while i < len(tokens):
                depth += {"open": 1, "close": -1}.get(tokens[i][0], 0)
                i += 1
                if depth == 0:
                    break
            continue
        if lowered in _AGGREGATIONS or lowered in _KEYWORDS or lowered in _GROUPINGS or following[0] == "open":
            i += 1  # an aggregation, a keyword or a function's name
            continue
        matchers: dict[str, tuple[str, str]] = {}
        if following[0] == "braces":
            body = following[1][1:-1]
            position = 0
            while position < len(body.strip()):
                found = _MATCHER.match(body, position)
                if found is None:
                    raise ValueError(f"unreadable label matchers {following[1]} in {expr!r}")
                matchers[found.group(1)] = (found.group(2), found.group(3)[1:-1])
                position = found.end()
            i += 1
        yield text, matchers
        i += 1


def contract_of(metric: str) -> tuple[str, frozenset[str]] | None:
    """The contract's type and labels of a metric as a query names it (a histogram's ``_bucket`` with ``le``)."""
    if metric in CONTRACT:
        return CONTRACT[metric]
    if metric in PROMETHEUS_OWN:
        return PROMETHEUS_OWN[metric]
    for suffix, extra in (("_bucket", {"le"}), ("_sum", set()), ("_count", set())):
        base = metric.removesuffix(suffix)
        if metric.endswith(suffix) and CONTRACT.get(base, ("",))[0] == "histogram":
            return "histogram", CONTRACT[base][1] | extra
    return None


def contract_problems(expr: str) -> list[str]:
    """What in ``expr`` is outside the contract: metrics it does not have, labels a metric does not carry,
    a measure it does not serve. Empty when the query keeps to it."""
    problems = []
    for metric, matchers in selectors(expr):
        known = contract_of(metric)
        if known is None:
            problems.append(f"{metric} is no metric of the contract")
            continue
        for label, (operator, value) in matchers.items():
            if label not in known[1] | TARGET_LABELS:
                problems.append(f"{metric} has no label {label}")
            if label == "measure" and operator == "=" and value not in MEASURES:
                problems.append(f"{metric}: no measure {value}")
    return problems


def _panels(panels: Sequence[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels") or [])  # a collapsed row holds its panels


def panels(path: Path = DASHBOARD) -> list[Mapping[str, Any]]:
    """Every panel of the dashboard, rows and the panels inside collapsed rows included."""
    return list(_panels(json.loads(Path(path).read_text())["panels"]))


def _regex_value(value: str | Sequence[str]) -> str:
    if isinstance(value, str):
        return value
    return "|".join(re.escape(each) for each in value) if value else ".*"


def substitute(expr: str, values: Mapping[str, str | Sequence[str]] | None = None) -> str:
    """``expr`` with the dashboard's variables replaced: ``$project`` and ``$control`` by ``values`` (a regex
    string, or a list of values joined as an alternation), ``.*`` (every value, as "All") where none is given;
    Grafana's ``$__rate_interval``, ``$__interval`` and ``$__range`` by fixed ranges.

    >>> substitute('m{project=~"$project", control=~"${control}"}[$__rate_interval]', {"project": ["3", "4"]})
    'm{project=~"3|4", control=~".*"}[5m]'

    Raises
    ------
    ValueError
        For a variable the dashboard does not define.
    """
    given = {"project": ".*", "control": ".*", **{name: _regex_value(v) for name, v in (values or {}).items()}}
    known = {**given, **BUILT_INS}

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2) or match.group(3)
        if name not in known:
            raise ValueError(f"unknown variable ${name} in {expr!r}")
        return known[name]

    return _VARIABLE.sub(replace, expr)


def panel_queries(path: Path = DASHBOARD) -> list[tuple[str, str]]:
    """Every panel's title and raw ``expr`` (variables not substituted), rows left out."""
    return [(panel["title"], target["expr"]) for panel in panels(path) if panel.get("type") != "row"
            for target in panel.get("targets", []) if target.get("expr")]


def dashboard_queries(path: Path = DASHBOARD, values: Mapping[str, str | Sequence[str]] | None = None) -> list[str]:
    """Every panel query of the dashboard at ``path``, its variables substituted (:func:`substitute`): what to
    send to a real Prometheus.

    >>> any("ls_agreement_agreement" in query for query in dashboard_queries())
    True
    """
    return [substitute(expr, values) for _, expr in panel_queries(path)]


def variable_queries(path: Path = DASHBOARD) -> list[tuple[str, str]]:
    """The template variables' queries (``label_values(METRIC{...}, LABEL)``): name and the metric selector."""
    found = []
    for variable in json.loads(Path(path).read_text())["templating"]["list"]:
        if variable.get("type") == "query":
            query = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
            selector = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query)
            assert selector is not None, query
            found.append((variable["name"], selector.group(1)))
    return found
