"""The files of one project's saved state: restored before the first pass, saved after a pass that changed it.

:class:`SavedStateKeeper` is one part of :class:`plugin.keeper.monitor.ProjectMonitor`: the only one that reads or
writes a file (:mod:`plugin.state.saved`), under the project's lock for the state and outside it for the disk.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from plugin.clock import now_iso
from plugin.labelstudio.errors import one_line
from plugin.state.project import ProjectState
from plugin.state.saved import SavedStateError, StateFiles, Unsaved, pickled, read_state, write_state

__all__ = ["SavedStateKeeper", "SavedVersion"]

SavedVersion = tuple[tuple[int, int], datetime | None]
"""The state's :meth:`ProjectMonitor.version` and watermark, as last saved."""


class SavedStateKeeper:
    """What was restored, saved or refused of the project's state file, and the saving itself."""

    _lock: threading.RLock
    state: ProjectState | None
    project: int
    passes: int
    _watermark: datetime | None
    _deferred: set[int]
    version: Any  # the monitor's: which state is in place and how often it changed
    install: Any
    options: Any

    def __init__(self) -> None:
        self._saved: dict[str, Any] = {}  # the state's file (plugin.state.saved): what was restored, saved, refused
        self._saved_version: SavedVersion | None = None
        super().__init__()

    def restore(self, state: ProjectState, *, watermark: datetime | None, saved_at: str, n_bytes: int) -> None:
        """Put a state read back from its file in place, before the first pass.

        Put a state read back from its file (:mod:`plugin.state.saved`) in place, before the first pass: that
        pass then reads only the tasks changed since ``watermark`` (:meth:`restored`)."""
        with self._lock:
            assert self.state is None, "A saved state is restored only before the first pass."
            self._deferred.update(self.install(state, watermark=watermark))  # events' tasks: after that pass too
            self._saved_version = (self.version(), self._watermark)
            self._saved["restored"] = {"saved_at": saved_at, "n_tasks": len(state.tasks), "bytes": n_bytes}

    def restored(self) -> bool:
        """Whether the state in place was restored from its file and no pass has run since."""
        with self._lock:
            return "restored" in self._saved and self.passes == 0

    def record_saved_state(self, event: str, detail: dict[str, Any]) -> None:
        """Keep what happened to the state's file.

        Keep what happened to the state's file (``/status`` shows the latest of each: "restored", "missing",
        "refused", "not used", "saved", "failed")."""
        with self._lock:
            self._saved[event] = detail

    def saved_state(self) -> dict[str, Any]:
        """What happened to the state's file (:meth:`record_saved_state`), by event."""
        with self._lock:
            return dict(self._saved)

    def unsaved(self) -> tuple[Unsaved, SavedVersion] | None:
        """The state pickled for saving, if it changed since it was last saved.

        The state pickled with what it was read up to (:func:`plugin.state.saved.pickled`), and its
        :meth:`version` with that watermark, if either changed since it was last saved or restored (None
        otherwise, or before the first pass); :meth:`mark_saved` once written. A pass that read tasks already held
        as they were (the service's own writes, taken as read) moves the watermark alone: saved, the next start
        lists fewer tasks."""
        with self._lock:
            version = (self.version(), self._watermark)
            if self.state is None or version == self._saved_version:
                return None
            return pickled(self.state, watermark=self._watermark), version

    def mark_saved(self, version: SavedVersion) -> None:
        """The state at ``version`` (:meth:`unsaved`) is on disk."""
        with self._lock:
            self._saved_version = version

    def restore_saved(self, files: StateFiles, controls: Mapping[str, Any]) -> str | None:
        """Restore the project's saved state when its file is sound and current.

        Put the project's saved state in place (:meth:`restore`) if its file is there and sound and the state
        was mapped with ``controls`` (the label config as just read) and the project's options; return why the
        file was refused, or None (restored, or no file). :meth:`saved_state` keeps what happened."""
        try:
            restored = read_state(files.directory, self.project, secret=files.secret, source=files.source)
            options = self.options()
            if restored is not None and not restored.state.mapped_with(controls, mapping=options.mapping,
                                                                        scoring=options.scoring):
                raise SavedStateError("The saved state was mapped with another label config or other options.")
        except Exception as error:  # noqa: BLE001 (any file that cannot be used: the project is read)
            reason = str(error) if isinstance(error, SavedStateError) else f"unreadable ({one_line(error)})"
            self.record_saved_state("refused", {"at": now_iso(), "reason": reason})
            return reason
        if restored is None:
            self.record_saved_state("missing", {"at": now_iso()})
            return None
        self.restore(restored.state, watermark=restored.watermark, saved_at=restored.saved_at,
                     n_bytes=restored.n_bytes)
        return None

    def save_changes(self, files: StateFiles) -> bool:
        """Save the state to its file if it changed; return whether it was written.

        Save the state to its file if it changed since it was last saved or restored; return whether it was
        written. :meth:`saved_state` keeps what happened.

        Raises
        ------
        Exception
            Whatever stopped the save (a full disk, a directory that cannot be written, memory), recorded as
            "failed" first; the state and its previous file stay as they were.
        """
        started = time.perf_counter()
        try:
            unsaved = self.unsaved()  # pickled under the project's lock, written after it
            if unsaved is None:
                return False
            pickled_state, version = unsaved
            size = write_state(pickled_state, files.directory, secret=files.secret, saved_at=now_iso(),
                               source=files.source)
        except Exception as error:
            self.record_saved_state("failed", {"at": now_iso(), "reason": one_line(error)})
            raise
        self.mark_saved(version)
        self.record_saved_state("saved", {"at": now_iso(), "n_tasks": pickled_state.n_tasks, "bytes": size,
                                          "seconds": round(time.perf_counter() - started, 3)})
        return True
