"""``/metrics``: the service in Prometheus's text format, read from the state ``/status`` reads.

One :class:`ServiceMetrics` per app (its own :class:`prometheus_client.CollectorRegistry`, never the module-level
one: the app factory owns its state, and tests create several apps). It is its registry's one collector, so that
a scrape reads the service as it stands, from the same sources as ``/status``: each project's monitor
(:meth:`plugin.keeper.monitor.ProjectMonitor.gauges`, what its ``status`` shows), the writer's outcomes, the
client's reachability and request counts. Only what happens between scrapes is kept here, where it happens: each
event's way to its task's meta by part (told by the writer), and the passes (told by the supervisor). They are
counted here, not with prometheus_client's ``Counter`` and ``Histogram``, which add ``_created`` series unless
those are turned off for the whole process.

A scrape costs O(controls + annotators shown) of each project that nobody touched since the last scrape; a
project whose tasks changed computes its live summary once, as ``/status`` does (O(annotations)), and a scrape
waits, as ``/status`` does, while a pass holds the project to score it. No task's score is computed here: flagged
and scored tasks are the last pass's counts. Each control shows at most ``--metrics-annotators`` annotators'
accuracy, the least accurate, each with the answers it is estimated on; ``ls_agreement_annotators`` says how many
there are.

Nothing secret is shown: no label holds the secret, a token, a payload or a task id; annotators are their Label
Studio user ids (their names and emails stay in ``/status``).
"""

from __future__ import annotations

import heapq
import math
import platform
import threading
import time
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from plugin import __version__
from plugin.clock import parse_time
from plugin.keeper.monitor import EVENT_PARTS, ProjectMonitor
from plugin.keeper.writer import TaskWriter
from plugin.labelstudio.client import LabelStudioClient
from plugin.service.settings import ServiceSettings

__all__ = ["BUCKETS", "CONTENT_TYPE", "PREFIX", "MonitoredProjects", "ServiceMetrics", "least_accurate"]

PREFIX = "ls_agreement_"
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Upper bounds of every histogram's buckets, in seconds (and +Inf)."""
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_EVENT_HELP = {
    "total": ("event_to_meta_seconds", "An event's way from its arrival to its task's meta written, or found right."),
    "queue": ("event_queue_seconds", "An event's waits: in the queues (events, coalescing, the writer), and behind "
                                     "the writes of its batch's earlier tasks."),
    "read": ("event_read_seconds", "Label Studio's read of an event's task."),
    "scoring": ("event_scoring_seconds", "An event's task scored: the project's state updated, its block and the diff "
                                         "with its meta."),
    "write": ("event_write_seconds", "An event's task's meta write (0 when its meta was right already)."),
}
_MEASURES = {"AC1": "ac1", "AC2": "ac2"}


class _Histogram:
    """Observations by label values, counted per bucket (not thread-safe: :class:`ServiceMetrics` locks)."""

    def __init__(self) -> None:
        self._series: dict[tuple[str, ...], tuple[list[int], list[float]]] = {}

    def observe(self, labels: tuple[str, ...], value: float) -> None:
        counts, total = self._series.setdefault(labels, ([0] * (len(BUCKETS) + 1), [0.0]))
        counts[bisect_left(BUCKETS, value)] += 1  # a value equal to a bound falls in that bound's bucket (le)
        total[0] += value

    def forget(self, project: str) -> None:
        for labels in [labels for labels in self._series if labels[0] == project]:
            del self._series[labels]

    def family(self, name: str, documentation: str, labelnames: list[str]) -> HistogramMetricFamily:
        family = HistogramMetricFamily(name, documentation, labels=labelnames)
        for labels, (counts, total) in sorted(self._series.items()):
            running, buckets = 0, []
            for bound, count in zip([*map(str, BUCKETS), "+Inf"], counts, strict=True):
                running += count
                buckets.append((bound, running))
            family.add_metric(list(labels), buckets, total[0])
        return family


def _gauge(name: str, documentation: str, labels: Iterable[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, documentation, labels=list(labels))


def _number(value: Any) -> float | None:
    """A value of ``/status`` as a sample, or None where it has none (null, not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return float(value)


def _measures(summary: Mapping[str, Any]) -> Iterator[tuple[str, float]]:
    """A control's live values (``/status`` ``controls``) by measure label; those with none are left out."""
    gwet = summary.get("gwet") or {}
    f1 = summary.get("f1") or {}
    found = [("spa", summary.get("spa")), ("alpha", summary.get("alpha")),
             (_MEASURES.get(gwet.get("coefficient", ""), ""), gwet.get("value")),
             *((f"f1_{match}", value) for match, value in sorted(f1.items()))]
    for measure, value in found:
        number = _number(value)
        if measure and number is not None:
            yield measure, number


def least_accurate(accuracy: Mapping[str, Any], n: int) -> list[tuple[str, float]]:
    """The ``n`` least accurate annotators and their accuracy, least first (ties by id).

    >>> least_accurate({"7": 0.9, "3": 0.5, "5": 0.5, "9": None}, 2)
    [('3', 0.5), ('5', 0.5)]
    """
    numbers = ((str(who), number) for who, value in accuracy.items() if (number := _number(value)) is not None)
    return heapq.nsmallest(n, numbers, key=lambda entry: (entry[1], entry[0]))


def _saved_at(saved: Mapping[str, Any]) -> datetime | None:
    """When the project's state was last saved: its last save, or the save it was restored from."""
    moments = [parse_time((saved.get("saved") or {}).get("at")),
               parse_time((saved.get("restored") or {}).get("saved_at"))]
    return max((moment for moment in moments if moment is not None), default=None)


class MonitoredProjects(Protocol):
    """What a scrape reads of the service (:class:`plugin.service.projects.ServiceState` is one)."""

    settings: ServiceSettings
    client: LabelStudioClient
    writer: TaskWriter
    monitors: dict[int, ProjectMonitor]
    lock: Any

    def projects(self) -> list[int]:
        """The projects monitored."""

    def seen(self) -> list[int]:
        """The projects the last project list showed."""

    def monitoring(self, project: int) -> bool:
        """Whether ``project`` is monitored."""


class ServiceMetrics:
    """The service's metrics: its registry, what happened between scrapes, and the collector of the rest.

    Parameters
    ----------
    service : MonitoredProjects
        Read at every scrape (its monitors, writer, client and settings); it tells :meth:`observe_event`,
        :meth:`pass_ended` and :meth:`forget`.
    """

    def __init__(self, service: MonitoredProjects) -> None:
        self._service = service
        self._lock = threading.Lock()
        self._events = {part: _Histogram() for part in EVENT_PARTS}
        self._pass_seconds = _Histogram()
        self._passes: Counter[tuple[str, str]] = Counter()
        self._pass_ended: dict[str, float] = {}
        self._known: dict[int, Any] = {}  # per project, what its monitor's gauges gave back last (a summary kept)
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)

    # --- told as it happens ---

    def observe_event(self, project: int, parts: Mapping[str, float]) -> None:
        """One event's way to its task's meta, in seconds per part (:data:`plugin.keeper.monitor.EVENT_PARTS`)."""
        if not self._service.monitoring(project):  # dropped while its refresh ran
            return
        with self._lock:
            for part, seconds in parts.items():
                if part in self._events:
                    self._events[part].observe((str(project),), seconds)

    def pass_ended(self, project: int, kind: str, seconds: float) -> None:
        """A pass of ``project`` (``kind`` full or changed) ended after ``seconds``."""
        if not self._service.monitoring(project):
            return
        with self._lock:
            label = str(project)
            for each in ("full", "changed"):
                self._passes[(label, each)] += 0  # both kinds shown from the first pass on
            self._passes[(label, kind)] += 1
            self._pass_seconds.observe((label,), seconds)
            self._pass_ended[label] = time.time()

    def forget(self, project: int) -> None:
        """Drop a project's series (it is no longer monitored)."""
        label = str(project)
        with self._lock:
            for histogram in (*self._events.values(), self._pass_seconds):
                histogram.forget(label)
            for key in [key for key in self._passes if key[0] == label]:
                del self._passes[key]
            self._pass_ended.pop(label, None)
            self._known.pop(project, None)

    # --- read at a scrape ---

    def exposition(self) -> bytes:
        """A scrape: every metric in Prometheus's text format 0.0.4 (:data:`CONTENT_TYPE`)."""
        return generate_latest(self.registry)

    def collect(self) -> Iterator[Metric]:
        """Every metric as the service stands (the registry calls it at each scrape)."""
        yield from self._service_metrics()
        yield from self._project_metrics()
        with self._lock:
            passes = CounterMetricFamily(PREFIX + "passes", "Passes ended, by kind (full: every task read; "
                                                            "changed: the tasks changed since).",
                                         labels=["project", "kind"])
            for (project, kind), count in sorted(self._passes.items()):
                passes.add_metric([project, kind], count)
            ended = _gauge("last_pass_timestamp_seconds", "Unix time the project's last pass ended.", ["project"])
            for project, moment in sorted(self._pass_ended.items()):
                ended.add_metric([project], moment)
            families = [passes, ended, self._pass_seconds.family(
                PREFIX + "pass_duration_seconds", "A pass's seconds (restore, read, scoring, tabs, save).",
                ["project"])]
            families += [self._events[part].family(PREFIX + name, documentation, ["project"])
                         for part, (name, documentation) in _EVENT_HELP.items()]
        yield from families

    def _service_metrics(self) -> Iterator[Metric]:
        service = self._service
        settings = service.settings
        build = _gauge("build_info", "The service's version and Python.", ["version", "python"])
        build.add_metric([__version__, platform.python_version()], 1)
        shard = _gauge("shard_info", "This replica's shard K of N (1 of 1 without --shard).", ["shard", "shards"])
        index, count = settings.shard or (1, 1)
        shard.add_metric([str(index), str(count)], 1)
        interval = _gauge("reconcile_interval_seconds", "Seconds between passes (--reconcile-interval).")
        interval.add_metric([], settings.reconcile_interval)
        reachability = service.client.reachability
        up = _gauge("label_studio_up", "1 while Label Studio answers, 0 while it is unreachable (/status "
                                       "label_studio.reachable).")
        up.add_metric([], 1.0 if reachability.unreachable_for() == 0.0 else 0.0)
        requests = CounterMetricFamily(PREFIX + "label_studio_requests", "Requests sent to Label Studio, by outcome "
                                       "(ok, client_error: 4xx, server_error: 5xx or not JSON, unreachable).",
                                       labels=["outcome"])
        for outcome, n in reachability.requests().items():
            requests.add_metric([outcome], n)
        writes = CounterMetricFamily(PREFIX + "writes", "Task refreshes by outcome (/status writes: written, "
                                     "unchanged, failed, ...).", labels=["outcome"])
        for outcome, n in sorted(service.writer.outcome_counts().items()):
            writes.add_metric([outcome], n)
        owned = _gauge("project_owned", "A project this replica monitors.", ["project"])
        for project in service.projects():
            owned.add_metric([str(project)], 1)
        seen = _gauge("project_seen", "A project the replica's last project list showed (owned or not; with "
                                      "named projects, those named).", ["project"])
        for project in service.seen():
            seen.add_metric([str(project)], 1)
        yield from (build, shard, interval, up, requests, writes, owned, seen)

    def _project_metrics(self) -> Iterator[Metric]:
        service = self._service
        with service.lock:
            monitors = sorted(service.monitors.items())
        per_control = ["project", "control"]
        agreement = _gauge("agreement", "The control's live agreement (/status controls), by measure.",
                           [*per_control, "measure"])
        lower = _gauge("agreement_ci_lower", "Lower bound of SPA's interval.", [*per_control, "measure"])
        upper = _gauge("agreement_ci_upper", "Upper bound of SPA's interval.", [*per_control, "measure"])
        threshold = _gauge("threshold", "The control's flag threshold in force.", per_control)
        items = _gauge("items", "The control's items (n_items).", per_control)
        annotations = _gauge("annotations", "Task and annotator pairs that answered the control (n_annotations).",
                             per_control)
        not_scored = _gauge("not_scored", "1: a bug keeps this control from being scored (/status not_scored).",
                            per_control)
        accuracy = _gauge("annotator_accuracy", "An annotator's estimated accuracy (the consensus's), for the "
                                                "--metrics-annotators least accurate per control.",
                          [*per_control, "annotator"])
        answers = _gauge("annotator_answers", "The answers an annotator's estimated accuracy is estimated on, for the "
                                              "annotators annotator_accuracy shows.", [*per_control, "annotator"])
        annotators = _gauge("annotators", "Annotators the control's consensus estimates an accuracy of.", per_control)
        tasks = _gauge("tasks", "Tasks the project's state holds.", ["project"])
        scored = _gauge("tasks_scored", "Tasks with a score at the last pass.", ["project"])
        flagged = _gauge("tasks_flagged", "Flagged tasks at the last pass.", ["project"])
        skipped = _gauge("skipped_results", "Results reading and mapping skipped, by reason (/status skipped).",
                         ["project", "reason"])
        age = _gauge("saved_state_age_seconds", "Seconds since the project's state was last saved (--state-dir).",
                     ["project"])
        shown = service.settings.metrics_annotators
        now = datetime.now(UTC)
        with self._lock:
            known = {project: self._known.get(project) for project, _ in monitors}
        kept = {}
        for project, monitor in monitors:
            label = str(project)
            kept[project], view = monitor.gauges(known[project])
            if not view["ready"]:
                continue
            for control, summary in view["controls"].items():
                labels = [label, control]
                for measure, value in _measures(summary):
                    agreement.add_metric([*labels, measure], value)
                ci = summary.get("ci") or [None, None]
                for family, bound in ((lower, ci[0]), (upper, ci[1])):
                    if (number := _number(bound)) is not None:
                        family.add_metric([*labels, "spa"], number)
                for family, key in ((items, "n_items"), (annotations, "n_annotations")):
                    if (number := _number(summary.get(key))) is not None:
                        family.add_metric(labels, number)
                if "consensus" in summary:
                    estimated = summary["consensus"].get("accuracy") or {}
                    counted = summary["consensus"].get("n_answers") or {}
                    annotators.add_metric(labels, len(estimated))
                    for who, value in least_accurate(estimated, shown):
                        accuracy.add_metric([*labels, who], value)
                        if (number := _number(counted.get(who))) is not None:
                            answers.add_metric([*labels, who], number)
            for control in view["not_scored"]:
                not_scored.add_metric([label, control], 1)
            for control, value in view["thresholds"].items():
                threshold.add_metric([label, control], value)
            tasks.add_metric([label], view["n_tasks"])
            last = monitor.last_pass()
            if last is not None and last.n_scored is not None and last.n_flagged is not None:
                scored.add_metric([label], last.n_scored)
                flagged.add_metric([label], last.n_flagged)
            for reason, n in view["skipped"].items():
                skipped.add_metric([label, reason], n)
            saved_at = _saved_at(view["saved_state"]) if service.settings.state_dir is not None else None
            if saved_at is not None:
                age.add_metric([label], max(0.0, (now - saved_at).total_seconds()))
        monitored = set(service.projects())  # a project dropped during the scrape keeps nothing
        with self._lock:
            self._known = {project: memo for project, memo in kept.items() if project in monitored}
        yield from (agreement, lower, upper, threshold, items, annotations, not_scored, accuracy, answers, annotators,
                    tasks, scored, flagged, skipped, age)
