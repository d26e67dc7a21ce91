"""The admin report: tables from a project's state, as one HTML page, CSV files or one JSON document.

The tables come from a project's state (:mod:`.tables`) and are drawn as one HTML page (:mod:`.page`), or
written as CSV files or one JSON document with the same tables (:func:`write_report`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from plugin.bugs import InputError
from plugin.report.tables import Report, build_report
from plugin.settings import ReportOptions
from plugin.state.project import ProjectSnapshot

__all__ = ["FORMATS", "Report", "build_report", "check_writable", "project_report", "report_json", "write_report",
           "written_text"]

FORMATS = ("html", "csv", "json")


def project_report(snapshot: ProjectSnapshot, *, project: int, url: str, generated_at: str,
                   people: Mapping[str, str] | None = None, options: ReportOptions | None = None,
                   title: str | None = None) -> Report:
    """The report of a project read from the Label Studio at ``url``.

    Its header names the project by its ``title`` (as Label Studio shows it), and each task links to it in the Data
    Manager.
    """
    return build_report(snapshot, source=f"Project {project} at {url}", generated_at=generated_at, people=people,
                        task_url=f"{url}/projects/{project}/data?task={{task}}", title=title or f"Project {project}",
                        options=options)


def written_text(report: Report, out: Path, written: Sequence[Path]) -> str:
    """The line that says what :func:`write_report` wrote to ``out``.

    It says how many tasks, flagged, files and KiB.
    """
    size = sum(path.stat().st_size for path in written)
    return (f"Wrote the report of {report.overview['n_tasks']} tasks ({report.overview['flagged']} flagged) to "
            f"{out} ({len(written)} file{'s' if len(written) > 1 else ''}, {size / 1024:.0f} KiB).")


def _plain(value: Any) -> Any:
    """A JSON-ready value: NaN becomes null, timestamps ISO 8601, numpy scalars Python's."""
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def report_json(report: Report) -> dict[str, Any]:
    """The report's tables as JSON-ready data: ``meta`` and one list of records per table."""
    out: dict[str, Any] = {"meta": {"title": report.title, "source": report.source,
                                    "generated_at": report.generated_at, **report.overview}}
    for name, table in report.tables().items():
        out[name] = [{key: _plain(value) for key, value in record.items()}
                     for record in table.to_dict(orient="records")]
    return out


def check_writable(out: Path, *, format: str = "html") -> None:
    """Refuse, before anything is read, an output the report could not be written to.

    Raises
    ------
    InputError
        With a sentence that says why: the folder it would go in does not exist or cannot be written to, or ``out``
        is a folder (a file for CSV, which writes a folder of files).
    """
    folder = out if format == "csv" and out.is_dir() else out.parent
    if format == "csv" and out.exists() and not out.is_dir():
        raise InputError(f"Cannot write the CSV report to {out}: it is a file, and CSV writes a folder of files.")
    if format != "csv" and out.is_dir():
        raise InputError(f"Cannot write the report to {out}: it is a folder; name a file.")
    if not folder.is_dir():
        raise InputError(f"Cannot write the report to {out}: the folder {folder} does not exist.")
    if not os.access(folder, os.W_OK | os.X_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise InputError(f"Cannot write the report to {out}: permission denied.")


def write_report(report: Report, out: Path, *, format: str = "html") -> list[Path]:
    """Write the report to ``out``: one HTML file, one JSON file, or a folder of CSV files (one per table).

    Returns
    -------
    list of Path
        The files written.
    """
    if format == "html":
        from plugin.report.page import render_html  # matplotlib is imported only to draw

        out.write_text(render_html(report), encoding="utf-8")
        return [out]
    if format == "json":
        out.write_text(json.dumps(report_json(report), indent=1), encoding="utf-8")
        return [out]
    if format == "csv":
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, table in report.tables().items():
            path = out / f"{name}.csv"
            table.to_csv(path, index=False)
            written.append(path)
        return written
    raise ValueError(f"Unknown report format {format!r}; choose one of: {', '.join(FORMATS)}.")
