"""What the service shows: ``/status`` and a monitored project's report, from the state as it stands."""

from __future__ import annotations

from typing import Any

from plugin import __version__
from plugin.clock import now_iso
from plugin.keeper.monitor import ProjectMonitor
from plugin.report import Report, project_report
from plugin.service.projects import ServiceState

__all__ = ["project_status", "service_report", "service_status"]


def project_status(service: ServiceState, monitor: ProjectMonitor) -> dict[str, Any]:
    """One project's part of ``/status``: its monitor's status, its schedule, events and pending writes.

    Each categorical control shows its consensus: the method and each annotator's estimated accuracy and answers
    as fit at the last pass.
    """
    out = monitor.status()
    people = service.people.known()
    for control in out["controls"].values():  # annotators by name as last read (none: their ids)
        for key in ("accuracy", "n_answers") if "consensus" in control else ():
            control["consensus"][key] = {people.get(who, who): value
                                         for who, value in control["consensus"][key].items()}
    out["next_pass_in"] = round(service.next_pass_in(monitor.project), 1)
    out.update(service.events.counts(monitor.project))
    out["pending_writes"] = service.writer.pending_for(monitor.project)
    return out


def service_status(service: ServiceState) -> dict[str, Any]:
    """``/status``: the projects, what was ignored, errors, writes, Label Studio.

    ``/status``: every project, what was ignored or refused, errors, writes, and Label Studio's reachability.
    """
    reachability = service.client.reachability
    unreachable = reachability.unreachable_for()
    with service.events.lock:
        ignored = dict(service.events.ignored)
    with service.lock:
        counted = {"events_ignored": ignored, "bad_payloads": dict(service.bad_payloads),
                   "rejected_requests": service.rejected, "errors": service.errors.as_dict()}
        monitors = sorted(service.monitors.items())
        removed = list(service.removed)
    settings = service.settings
    return {
        "projects": {str(p): project_status(service, m) for p, m in monitors},
        "all_projects": settings.all_projects,
        "shard": "{}/{}".format(*settings.shard) if settings.shard else None,
        "projects_removed": removed,
        "healthy": service.healthy(),
        "label_studio": {"reachable": unreachable == 0.0, "unreachable_for": round(unreachable, 1),
                         "last_error": reachability.last_error},
        "writes": service.writer.outcome_counts(), "write_latency_ms": service.writer.latency(),
        **counted, "version": __version__,
    }


def service_report(service: ServiceState, project: int | None) -> Report:
    """The admin report of a monitored project, from the state as it stands.

    The admin report of a monitored project, from the state as it stands (no read of Label Studio
    beyond the users' names).

    Raises
    ------
    LookupError
        If the project is not monitored (or, with several, none was named).
    RuntimeError
        If the project has not been read yet.
    """
    with service.lock:
        monitors = dict(service.monitors)
    if project is None and len(monitors) == 1:
        project = next(iter(monitors))
    monitor = monitors.get(project) if project is not None else None
    if monitor is None:
        raise LookupError(f"Name one of the monitored projects: ?project={'|'.join(map(str, sorted(monitors)))}.")
    people = service.people.get()
    snapshot = monitor.snapshot()  # only the snapshot: the scoring and drawing happen after the lock is released
    if snapshot is None:
        raise RuntimeError(f"Project {project} has not been read yet; try again in a moment.")
    return project_report(snapshot, project=monitor.project, url=service.settings.connection.url,
                          generated_at=now_iso(timespec="milliseconds"), people=people,
                          title=service.client.project_title(monitor.project))
