"""Program errors, told apart from the user's mistakes: each says it is a bug and where its traceback was kept.

A user's mistake (a file that is not an export, a bad flag, Label Studio refusing a token) is an
:class:`InputError` or a :class:`plugin.labelstudio.errors.LabelStudioError`, said in one line. Anything else
raised while a command or a control is being scored is a bug in this program: :func:`keep_bug` writes its
traceback to a file of its own and logs it, and the caller tells the user in one line where it is (the command
exits with :data:`EX_SOFTWARE`; a control's scoring is reported as not scored, and every other control goes on).
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

__all__ = ["EX_SOFTWARE", "Bug", "InputError", "contained", "keep_bug"]

T = TypeVar("T")

EX_SOFTWARE = 70
"""The exit status of a command stopped by a bug (``sysexits.h``'s ``EX_SOFTWARE``)."""

logger = logging.getLogger(__name__)


class InputError(ValueError):
    """What the user gave cannot be used (a file, a config, a path); the message is one line for the user."""


@dataclass(frozen=True)
class Bug:
    """A program error as it is told: where it happened, the error in one line, and its traceback's file.

    Attributes
    ----------
    where : str
        What was being done (``scoring Choices 'sentiment'``).
    error : str
        The exception's type and message, on one line.
    file : Path or None
        The file its traceback was written to (None if it could not be written: then it is in the log alone).
    """

    where: str
    error: str
    file: Path | None

    def reason(self) -> str:
        """The bug as a reason, e.g. in a summary's not-scored controls: one line that names the traceback."""
        kept = f"its traceback is in {self.file}" if self.file is not None else "its traceback is in the log"
        return f"a bug in ls-agreement while {self.where} ({self.error}); {kept}"


def keep_bug(error: BaseException, *, where: str, folder: Path | None = None, log: bool = True) -> Bug:
    """Write ``error``'s traceback to a file, log it in one line, and return the bug as it is told.

    The file is named after the place and the error's type and line, so a bug met again at every pass of a
    service rewrites one file rather than filling the disk. The log gets one line at ERROR that names the file
    (the whole traceback where the file cannot be written).

    Parameters
    ----------
    error : BaseException
    where : str
        What was being done, as a phrase after "while".
    folder : Path, optional
        Where the file goes (the system's temporary folder by default, ``$TMPDIR`` where it is set).
    log : bool
        Whether to log it (a command that tells the user itself does not).
    """
    frames = traceback.extract_tb(error.__traceback__)
    place = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    digest = hashlib.sha256(f"{where}|{type(error).__name__}|{place}".encode()).hexdigest()[:12]
    path: Path | None = Path(folder or tempfile.gettempdir()) / f"ls-agreement-bug-{digest}.txt"
    try:
        path.write_text(f"A bug in ls-agreement while {where}.\n\n{''.join(traceback.format_exception(error))}",
                        encoding="utf-8")
    except OSError:
        path = None
    bug = Bug(where=where, error=" ".join(f"{type(error).__name__}: {error}".split())[:300], file=path)
    if log:
        told = bug.reason()
        logger.error("%s%s.", told[0].upper(), told[1:], exc_info=error if path is None else None)
    return bug


def contained(call: Callable[[], T], *, where: str) -> T | Bug:
    """``call()``, or the bug it raised, kept (:func:`keep_bug`): a bug in one control costs no other.

    Examples
    --------
    >>> contained(lambda: 1 + 1, where="adding")
    2
    """
    try:
        return call()
    except Exception as error:  # noqa: BLE001 (a program error: kept, told, and left in its room)
        return keep_bug(error, where=where)
