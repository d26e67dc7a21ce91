"""Exports read whole, for tests: the product reads an export one task at a time (:func:`open_export`)."""

from pathlib import Path
from typing import Any

from plugin.labelstudio.export import open_export
from plugin.mapping.labelconfig import Control


def export_project(path: Path, *, label_config: str | None = None) -> tuple[list[Any], dict[str, Control]]:
    """Every task of the export at ``path`` as a list, and its controls (given, else inferred)."""
    export, controls = open_export(path, label_config=label_config)
    return list(export), controls


def read_export(path: Path) -> list[Any]:
    """Every task of the export at ``path`` as a list."""
    return export_project(path)[0]
