"""How ``serve`` logs: one line per pass and per problem at INFO, per-request lines only at DEBUG.

The HTTP clients under the SDK (httpx, httpcore, urllib3) log every request
at INFO with its full query string. An operator reading a service that
writes thousands of meta updates an hour needs the passes and the problems,
so those loggers are raised to WARNING unless the level asked for is DEBUG.
``--log-format json`` writes one JSON object per line for log shippers.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

__all__ = ["LOG_FORMATS", "LOG_LEVELS", "REQUEST_LOGGERS", "JsonFormatter", "configure_logging"]

LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
REQUEST_LOGGERS = ("httpx", "httpcore", "urllib3", "requests")
"""Loggers that write one line per HTTP request: heard only at DEBUG."""

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """A log formatter writing one JSON object per record.

    The fields are ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message`` (and ``error``).
    """

    def format(self, record: logging.LogRecord) -> str:
        line = {"time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
                "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(handler: logging.Handler | None = None, *, level: str = "INFO", fmt: str = "text") -> None:
    """Set the root logger to ``level`` with one handler writing ``fmt`` (``text`` or ``json``).

    The per-request loggers (:data:`REQUEST_LOGGERS`) are kept at WARNING
    unless ``level`` is DEBUG. ``handler`` defaults to a stream on stderr.
    """
    if level not in LOG_LEVELS:
        raise ValueError(f"The log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}.")
    if fmt not in LOG_FORMATS:
        raise ValueError(f"The log format must be one of {', '.join(LOG_FORMATS)}, not {fmt!r}.")
    handler = handler or logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if level == "DEBUG" else logging.WARNING)
