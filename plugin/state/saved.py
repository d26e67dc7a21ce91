"""A project's state on disk: saved after a service's pass, restored when the service starts again.

A restart otherwise reads every task of every project again before its first
answer: at Label Studio's pace (``--read-rate``, 200 tasks a second by
default) a million tasks take about 80 minutes. With ``serve --state-dir``
the service saves each project's state after a pass that changed it, with the
``updated_at`` it was read up to, and on its next start restores it and reads
only the tasks Label Studio changed since (:func:`plugin.keeper.passes.full_pass`
with ``incremental``): the file is a hint, Label Studio the truth. The
service does not restore a state mapped with another label config or other
options than the project's now (events would be scored with the old ones);
the pass after a restore reads every task when tasks were deleted since
(the task count still differs once the changed tasks are read), as any
pass of changed tasks does, and every ``--full-pass-every`` passes read
every task anyway. ``sync`` and ``report`` read and save the same files.

The file holds the state as Python's pickle, which can run code when read, so
it is signed (an HMAC-SHA256 keyed by the webhook secret over its header and
body, checked before anything is unpickled) and unpickled with a restricted
unpickler that names only this package's classes and plain containers,
numbers and numpy arrays (the webhook secret is known to Label Studio, which
sends it with every event). A file that is not signed with this service's
secret, was altered or cut short, was saved by other code (:func:`code_digest`:
a change of this package's source may change what a result maps to) or from
another Label Studio (its URL), or names anything else, is refused with a
one-line reason, and the project is read as if no file were there. Files are
written to a temporary name, synced and renamed, so a crash while saving
leaves the previous file; they are readable by their owner only, as they hold
annotators' names and labels.

File layout: ``MAGIC``, one line of JSON (the header), then the HMAC of the
header line and the body (32 bytes), then the body.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from plugin.bugs import InputError
from plugin.state.project import ProjectState

__all__ = ["FORMAT", "LOCK_WAIT", "MAGIC", "Restored", "SavedStateError", "StateFiles", "Unsaved", "code_digest",
           "pickled", "read_state", "state_path", "write_state"]

MAGIC = b"ls-agreement project state\n"
FORMAT = 1
"""The layout of the file; a file of another layout is refused."""
_KEY_PURPOSE = b"ls-agreement saved project state"
_DIGEST = hashlib.sha256().digest_size


class SavedStateError(InputError):
    """A saved state that cannot be used; the message says why, in one line."""


@dataclass(frozen=True)
class StateFiles:
    """Where projects' states are saved, and how their files are signed and whose they are.

    Attributes
    ----------
    directory : Path
        One file per project (:func:`state_path`).
    secret : str
        The key the files are signed with (the webhook secret); never shown in a repr.
    source : str
        The Label Studio the states were read from (its URL); a file saved from another is refused.
    """

    directory: Path
    secret: str = field(repr=False)
    source: str


@dataclass(frozen=True)
class Restored:
    """A state read back from its file.

    Attributes
    ----------
    state : ProjectState
    watermark : datetime or None
        The newest ``updated_at`` the state was read up to.
    saved_at : str
        When it was saved (ISO 8601, UTC).
    n_bytes : int
        The file's size.
    """

    state: ProjectState
    watermark: datetime | None
    saved_at: str
    n_bytes: int


def code_digest(root: Path | None = None) -> str:
    """A digest of this package's source and of the Python and numpy versions.

    The source is ``plugin`` and ``agreement`` under ``root``, by default where this module is installed. A state
    saved by other code is refused.
    """
    root = Path(__file__).resolve().parents[2] if root is None else root
    digest = hashlib.sha256(f"{sys.version_info[:2]} numpy {np.__version__}".encode())
    for package in ("plugin", "agreement"):
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def state_path(directory: Path, project: int) -> Path:
    """Where ``project``'s state is saved in ``directory``."""
    return directory / f"project-{project}.state"


_NUMPY = frozenset({"_frombuffer", "_reconstruct", "dtype", "ndarray", "scalar"})
_OUTSIDE: Mapping[str, frozenset[str]] = MappingProxyType({
    "array": frozenset({"array", "_array_reconstructor"}),
    "builtins": frozenset({"bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list",
                           "range", "set", "slice", "str", "tuple"}),
    "collections": frozenset({"Counter", "OrderedDict", "defaultdict", "deque"}),
    "datetime": frozenset({"date", "datetime", "timedelta", "timezone"}),
    **dict.fromkeys(("numpy", "numpy._core.multiarray", "numpy._core.numeric", "numpy.core.multiarray",
                     "numpy.core.numeric"), _NUMPY),
})
"""What a state's pickle may name beyond this package's own classes: containers, numbers and numpy arrays."""


class _StateUnpickler(pickle.Unpickler):
    """Unpickles a project state and nothing else.

    It allows this package's classes, and :data:`_OUTSIDE`'s names. A signed file is this service's own; this
    keeps a file signed by someone who learnt the secret from running code.
    """

    def find_class(self, module: str, name: str) -> Any:
        if module.split(".")[0] in ("plugin", "agreement"):
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        elif name in _OUTSIDE.get(module, frozenset()):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a project state")


def _key(secret: str) -> bytes:
    return hmac.new(secret.encode(), _KEY_PURPOSE, hashlib.sha256).digest()


def _signature(secret: str, header: bytes, body: bytes) -> bytes:
    mac = hmac.new(_key(secret), header, hashlib.sha256)
    mac.update(body)
    return mac.digest()


@dataclass(frozen=True)
class Unsaved:
    """A state pickled (under its monitor's lock), with what its file's header says of it.

    Attributes
    ----------
    project : int
    body : bytes
        :func:`pickled` of the state.
    n_tasks : int
    watermark : datetime or None
        The newest ``updated_at`` the state was read up to.
    """

    project: int
    body: bytes
    n_tasks: int
    watermark: datetime | None


def pickled(state: ProjectState, *, watermark: datetime | None) -> Unsaved:
    """``state``, read up to ``watermark``, as the body of its file."""
    if state.project is None:
        raise ValueError("Only a Label Studio project's state is saved (this one was read from an export).")
    return Unsaved(state.project, pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL), len(state.tasks), watermark)


LOCK_WAIT = 120.0
"""Seconds a save waits for another's in the same directory (a million tasks' state takes a few) before it fails."""


def _take_turn(folder: int, *, wait: float) -> None:
    """Hold the lock of the directory open as ``folder``.

    The lock is released when it is closed, or when the process dies.

    Raises
    ------
    OSError
        If another save holds it for longer than ``wait`` seconds (a process stopped while saving).
    """
    import fcntl  # POSIX: a save is where it is needed

    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise OSError(f"Another save has held the state directory for {wait:.0f} s; this one gave up "
                              "(the previous file stays).") from None
            time.sleep(0.05)


def write_state(unsaved: Unsaved, directory: Path, *, secret: str, saved_at: str, source: str,
                lock_wait: float = LOCK_WAIT) -> int:
    """Save a state (:func:`pickled`) in ``directory``; return the file's size in bytes.

    The state is that of the Label Studio at ``source`` (its URL).

    The file replaces the project's previous one only once it is complete and
    synced; what a save that was killed half-way left is removed first. Saves
    into one directory take turns (a lock on the directory: ``serve``,
    ``sync`` and ``report`` may share it), so no save removes another's file
    while it is written.

    Raises
    ------
    OSError
        If the directory cannot be written, or another save held it for ``lock_wait`` seconds (the previous file
        stays).
    """
    header = json.dumps({"format": FORMAT, "project": unsaved.project, "source": source, "code": code_digest(),
                         "saved_at": saved_at, "n_tasks": unsaved.n_tasks,
                         "watermark": unsaved.watermark.isoformat() if unsaved.watermark is not None else None},
                        sort_keys=True).encode() + b"\n"
    directory.mkdir(parents=True, exist_ok=True)
    target = state_path(directory, unsaved.project)
    folder = os.open(directory, os.O_RDONLY)
    try:
        _take_turn(folder, wait=lock_wait)
        for leftover in directory.glob(f".{target.name}.*.part"):  # under the lock: these are a killed save's
            leftover.unlink(missing_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out:  # mkstemp's file is readable by its owner only
                out.write(MAGIC)
                out.write(header)
                out.write(_signature(secret, header, unsaved.body))
                out.write(unsaved.body)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        os.fsync(folder)  # the rename itself survives a crash
    finally:
        os.close(folder)
    return len(MAGIC) + len(header) + _DIGEST + len(unsaved.body)


def read_state(directory: Path, project: int, *, secret: str, source: str) -> Restored | None:
    """The state saved for ``project`` in ``directory``, or None when there is no file.

    The state is that of the Label Studio at ``source``.

    Raises
    ------
    SavedStateError
        If the file is unreadable, altered, cut short, signed with another
        secret, of another layout, saved by other code, of another Label
        Studio or of another project, or names what a state never holds.
    """
    path = state_path(directory, project)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SavedStateError(f"The saved state {path.name} cannot be read ({error.strerror}).") from None
    if not data.startswith(MAGIC):
        raise SavedStateError(f"{path.name} is not a saved project state.")
    end = data.find(b"\n", len(MAGIC))
    if end < 0 or len(data) < end + 1 + _DIGEST:
        raise SavedStateError(f"The saved state {path.name} is cut short.")
    header, signature = data[len(MAGIC):end + 1], data[end + 1:end + 1 + _DIGEST]
    start = end + 1 + _DIGEST
    body = memoryview(data)[start:]
    if not hmac.compare_digest(signature, _signature(secret, header, body)):
        raise SavedStateError(f"The saved state {path.name} is not signed with this service's secret, or was "
                              "altered or cut short; it is not read.")
    fields = json.loads(header)
    if fields.get("format") != FORMAT or fields.get("code") != code_digest():
        raise SavedStateError(f"The saved state {path.name} was saved by another version of ls-agreement.")
    if fields.get("source") != source:
        raise SavedStateError(f"The saved state {path.name} was read from another Label Studio "
                              f"({fields.get('source')}).")
    if fields.get("project") != project:
        raise SavedStateError(f"The saved state {path.name} holds project {fields.get('project')}, not {project}.")
    stream = io.BytesIO(data)  # shares the file's bytes (a memoryview would be copied: the whole state once more)
    stream.seek(start)
    try:
        state = _StateUnpickler(stream).load()
    except Exception as error:  # noqa: BLE001 (signed, yet not a state this code reads)
        raise SavedStateError(f"The saved state {path.name} cannot be read back ({type(error).__name__}: "
                              f"{str(error)[:200]}).") from None
    if not isinstance(state, ProjectState) or state.project != project:
        raise SavedStateError(f"The saved state {path.name} does not hold project {project}'s state.")
    watermark = fields.get("watermark")
    return Restored(state, datetime.fromisoformat(watermark) if watermark is not None else None,
                    str(fields.get("saved_at")), len(data))
