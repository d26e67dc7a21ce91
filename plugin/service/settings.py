"""What ``serve`` is told at start: its settings, read once, and the rule for a strong webhook secret."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from plugin.settings import Connection, MappingOptions, ReviewOptions, ScoringOptions, SettingsError
from plugin.state.saved import StateFiles

__all__ = ["MARKER_HEADER", "SECRET_HEADER", "ServiceSettings", "check_secret_strength"]

SECRET_HEADER = "X-Agreement-Secret"
"""The secret's header; ``Authorization: Bearer <secret>`` and the path prefix ``/s/<secret>/`` are accepted too."""
MARKER_HEADER = "X-Agreement-Service"
"""Set on every webhook this service registers (its value: the service's URL), so that a later start at another
URL, or a clean stop, finds this service's webhooks among everyone else's."""


def check_secret_strength(secret: str) -> None:
    """Refuse a weak webhook secret.

    Raises
    ------
    SettingsError
        For fewer than 16 characters, white space, or fewer than 8 distinct characters.
    """
    if len(secret) < 16:
        raise SettingsError("Set AGREEMENT_WEBHOOK_SECRET to a shared secret of at least 16 characters.")
    if any(char.isspace() for char in secret) or not secret.isprintable():
        raise SettingsError("AGREEMENT_WEBHOOK_SECRET must not hold white space or control characters.")
    if len(set(secret)) < 8:
        raise SettingsError("AGREEMENT_WEBHOOK_SECRET is too simple: use at least 8 different characters "
                            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))').")


@dataclass(frozen=True)
class ServiceSettings:
    """Everything the service needs, read once at the entry point.

    Attributes
    ----------
    projects : tuple of int
        Projects to monitor.
    all_projects : bool
        Monitor every project the token can see, and those created later
        (``serve --project all``); ``projects`` may then be empty.
    public_url : str
        The URL Label Studio reaches this service at (for its webhook).
    secret : str
        Shared secret of the webhook (``AGREEMENT_WEBHOOK_SECRET``).
    connection : Connection
    mapping, scoring, review : MappingOptions, ScoringOptions, ReviewOptions
    coalesce_seconds : float
        How long a refresh waits for more events on its task.
    reconcile_interval : float
        Seconds between passes.
    full_pass_every : int
        Every this many passes reads every task; the others read only the
        tasks Label Studio changed since the last read.
    read_rate : float, optional
        Tasks per second a full pass reads at most.
    unhealthy_after : float
        ``/health`` answers 503 once Label Studio has been unreachable this long.
    max_body : int
        Largest webhook body accepted, in bytes.
    retry_delays : tuple of float
        Waits before each further attempt of a failed refresh.
    keep_webhooks : bool
        Leave the service's webhooks in Label Studio on a clean stop (by default they are removed).
    discover_interval : float
        Seconds between reads of the project list (new projects with
        ``all_projects``; deleted ones always); at most ``reconcile_interval``.
    settings_file : Path, optional
        Per-project settings (:mod:`plugin.project_settings`) over
        ``mapping``, ``scoring`` and ``review``; read again when it changes.
    shard : tuple of (int, int), optional
        ``(K, N)``: this service is shard K of N and monitors only the
        projects it owns (:meth:`owns`), so that several services share a
        team's projects without touching each other's.
    state_dir : Path, optional
        Where each project's state is saved after a pass that changed it,
        and restored from at start (:mod:`plugin.state.saved`): a restarted
        service then reads only the tasks changed since.
    metrics_annotators : int
        ``/metrics`` shows the estimated accuracy of at most this many annotators per control, the least accurate
        (:mod:`plugin.service.metrics`); 0 shows none.
    """

    projects: tuple[int, ...]
    public_url: str
    secret: str = field(repr=False)
    connection: Connection
    mapping: MappingOptions = field(default_factory=MappingOptions)
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    review: ReviewOptions = field(default_factory=ReviewOptions)
    coalesce_seconds: float = 0.02
    reconcile_interval: float = 300.0
    full_pass_every: int = 12
    read_rate: float | None = 200.0
    unhealthy_after: float = 300.0
    max_body: int = 16 * 2**20
    retry_delays: tuple[float, ...] = (1.0, 5.0, 20.0)
    keep_webhooks: bool = False
    all_projects: bool = False
    discover_interval: float = 60.0
    settings_file: Path | None = None
    shard: tuple[int, int] | None = None
    state_dir: Path | None = None
    metrics_annotators: int = 10

    def __post_init__(self) -> None:
        if not self.projects and not self.all_projects:
            raise SettingsError("Name the projects to monitor: --project ID (repeatable) or --project all.")
        if self.shard is not None:
            index, count = self.shard
            if not 1 <= index <= count:
                raise SettingsError(f"A shard is K/N with 1 <= K <= N; got {index}/{count}.")
            if self.projects and not any(self.owns(p) for p in self.projects):
                raise SettingsError(f"None of the projects named ({', '.join(map(str, self.projects))}) belongs to "
                                    f"shard {index}/{count}, which owns the ids {index}, {index + count}, "
                                    f"{index + 2 * count}, ...")
        if not self.metrics_annotators >= 0:
            raise SettingsError("--metrics-annotators is a whole number of annotators, 0 or more.")
        if not self.discover_interval > 0:
            raise SettingsError("The interval between reads of the project list must be positive seconds.")
        if not (self.reconcile_interval > 0 and self.unhealthy_after > 0 and self.full_pass_every >= 1
                and (self.read_rate is None or self.read_rate > 0)):
            raise SettingsError("The reconcile interval (--reconcile-interval) and --unhealthy-after must be positive "
                                "seconds, --full-pass-every at least 1, and --read-rate at least 0 (0: no limit).")

    @property
    def state_files(self) -> StateFiles | None:
        """Where the projects' states are saved, signed with the webhook secret (None without ``state_dir``)."""
        if self.state_dir is None:
            return None
        return StateFiles(self.state_dir, secret=self.secret, source=self.connection.url)

    def owns(self, project: int) -> bool:
        """Whether this service monitors a project (its shard owns it).

        Whether this service monitors ``project``: always without a shard; shard K of N owns the ids K, K + N,
        K + 2N, ... (a fixed rule, so that replicas agree without talking to each other).

        >>> settings = ServiceSettings(projects=(), all_projects=True, public_url="", secret="", connection=None,
        ...                            shard=(2, 3))
        >>> [p for p in range(1, 10) if settings.owns(p)]
        [2, 5, 8]
        """
        if self.shard is None:
            return True
        index, count = self.shard
        return (project - 1) % count == index - 1
