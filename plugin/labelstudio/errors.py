"""Errors from Label Studio, and any error as one short line for counters, logs and the user.

No SDK here: the state's keeper and the service report errors in one line without loading the client.
"""

from __future__ import annotations

__all__ = ["LabelStudioError", "LabelStudioNotFound", "one_line", "squeeze"]


class LabelStudioError(Exception):
    """Label Studio refused or failed a request; the message is one line for the user."""


class LabelStudioNotFound(LabelStudioError):
    """The object asked for does not exist (404): a task deleted since it was named."""


def squeeze(text: str, limit: int = 160) -> str:
    """``text`` on one line, its white space collapsed, cut to ``limit`` characters.

    >>> squeeze("a  b\\n c")
    'a b c'
    >>> squeeze("abcdef", 4)
    'abc…'
    """
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(error: BaseException) -> str:
    """An exception as one short line for counters and logs (never a payload, never a token).

    >>> one_line(ValueError("no\\nway"))
    'ValueError: no way'
    >>> one_line(LabelStudioError("Label Studio answered 500: boom"))
    'Label Studio answered 500: boom'
    """
    text = squeeze(str(error), 200)
    if isinstance(error, LabelStudioError):  # already a sentence for the user
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
