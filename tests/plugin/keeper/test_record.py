"""What the monitor records of a project's events and passes (plugin.keeper.record), and how it is split."""

import inspect

from plugin.keeper.event_path import EventPath
from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.record import ProjectRecord
from plugin.keeper.saving import SavedStateKeeper
from plugin.settings import MappingOptions, ReviewOptions, ScoringOptions


def _monitor():
    return ProjectMonitor(1, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=20), review=ReviewOptions())


def test_the_log_s_event_times_cover_the_events_since_it_last_told():
    monitor = _monitor()
    for seconds in (0.1, 0.2, 0.3):
        monitor.record_event_latency({"queue": seconds / 10, "read": seconds / 2, "scoring": 0.01, "write": 0.02,
                                      "total": seconds})
    told = monitor.take_event_latency()
    assert told["total"] == {"p50": 200.0, "p95": 300.0, "n": 3} and told["queue"]["p50"] == 20.0
    monitor.record_event_latency({"queue": 0.0, "read": 0.5, "scoring": 0.0, "write": 0.0, "total": 0.9})
    again = monitor.take_event_latency()
    assert again["total"] == {"p50": 900.0, "p95": 900.0, "n": 1} and again["read"]["p50"] == 500.0
    assert monitor.take_event_latency()["total"]["n"] == 0
    assert monitor.status()["event_latency_ms"]["total"]["n"] == 4  # /status keeps the last 1,000


def test_the_monitor_is_made_of_parts_by_job_each_under_20_methods():
    parts = (ProjectMonitor, EventPath, SavedStateKeeper, ProjectRecord)
    assert ProjectMonitor.__mro__[1:4] == parts[1:]
    for part in parts:
        own = [name for name, value in vars(part).items() if inspect.isfunction(value) or isinstance(value, property)]
        assert len(own) < 20, (part.__name__, len(own))
    # only the saved state's part reads or writes files
    for part in (ProjectMonitor, EventPath, ProjectRecord):
        assert "write_state" not in inspect.getsource(part) and "read_state" not in inspect.getsource(part)
