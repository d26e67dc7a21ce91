"""What ``serve`` logs at each level: passes and problems at INFO, requests only at DEBUG, JSON on demand."""

import io
import json
import logging

import pytest

from plugin.cli import build_parser
from plugin.logs import configure_logging


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in ("httpx", "httpcore", "urllib3", "requests")}
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    for name, value in levels.items():
        logging.getLogger(name).setLevel(value)


def _emit(level: str, fmt: str = "text") -> str:
    stream = io.StringIO()
    configure_logging(logging.StreamHandler(stream), level=level, fmt=fmt)
    logging.getLogger("httpx").info('HTTP Request: PATCH http://ls/api/tasks/474/?token=abc "HTTP/1.1 200 OK"')
    logging.getLogger("urllib3.connectionpool").info("Starting new HTTP connection (1): ls:8080")
    logging.getLogger("ls_agreement.reconcile").info("project 3: pass read 10 tasks, wrote 2")
    return stream.getvalue()


def test_info_holds_the_pass_and_no_request_line(restore_logging):
    out = _emit("INFO")
    assert "project 3: pass read 10 tasks, wrote 2" in out
    assert "HTTP Request" not in out and "connection" not in out and "token" not in out


def test_debug_adds_the_request_lines(restore_logging):
    out = _emit("DEBUG")
    assert "HTTP Request: PATCH" in out and "Starting new HTTP connection" in out


def test_json_writes_one_object_per_line(restore_logging):
    lines = _emit("INFO", "json").splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["level"] == "INFO" and record["logger"] == "ls_agreement.reconcile"
    assert record["message"] == "project 3: pass read 10 tasks, wrote 2"
    assert record["time"].endswith("+00:00")


def test_a_bad_level_or_format_is_refused_in_one_sentence(restore_logging):
    with pytest.raises(ValueError, match="The log level must be one of DEBUG, INFO, WARNING, ERROR, not 'LOUD'."):
        configure_logging(level="LOUD")
    with pytest.raises(ValueError, match="The log format must be one of text, json, not 'xml'."):
        configure_logging(fmt="xml")


def test_serve_takes_the_log_options():
    args = build_parser().parse_args(["serve", "--project", "1", "--log-level", "DEBUG", "--log-format", "json"])
    assert (args.log_level, args.log_format) == ("DEBUG", "json")
    defaults = build_parser().parse_args(["serve", "--project", "1"])
    assert (defaults.log_level, defaults.log_format) == ("INFO", "text")
