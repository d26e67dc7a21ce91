"""Per-project settings from a file: defaults at the top, one section per project; TOML or YAML.

``serve --settings FILE`` reads it at start and again whenever it changes
(a change that does not parse is refused in one line and the settings in use
are kept); ``sync`` and ``report`` read it once. A setting in the file wins
over its command-line flag; a project's section wins over the top. For
example, in TOML::

    threshold = 0.5              # every project
    min_gt_accuracy = 0.7

    [projects.3]
    threshold = 0.6
    control_thresholds = { sentiment = 0.7 }
    escalate = true

and in YAML::

    threshold: 0.5
    projects:
      3: {threshold: 0.6, control_thresholds: {sentiment: 0.7}, escalate: true}
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from plugin.settings import ProjectOptions, SettingsError

__all__ = ["KEYS", "MAX_SETTINGS_BYTES", "ProjectSettings", "read_project_settings"]

MAX_SETTINGS_BYTES = 1 << 20
"""The largest settings file read."""

KEYS: dict[str, tuple[str, str, str]] = {
    "threshold": ("scoring", "threshold", "number"),
    "control_thresholds": ("scoring", "thresholds", "numbers"),
    "flag_lowest_decile": ("scoring", "lowest_decile", "bool"),
    "flag_constant_low": ("scoring", "flag_constant_low", "bool"),
    "span_flag_on": ("scoring", "span_flag_on", "text"),
    "min_gt_accuracy": ("scoring", "min_gt_accuracy", "number"),
    "min_gt_items": ("scoring", "min_gt_items", "whole"),
    "consensus": ("scoring", "consensus", "text"),
    "consensus_prior": ("scoring", "consensus_prior", "pair"),
    "flag_on": ("scoring", "flag_on", "text"),
    "min_posterior": ("scoring", "min_posterior", "number"),
    "absent_span": ("mapping", "absent_span", "text"),
    "span_alignment": ("mapping", "span_alignment", "text"),
    "span_jaccard": ("mapping", "span_jaccard", "number"),
    "box_iou": ("mapping", "box_iou", "number"),
    "include_ground_truth": ("mapping", "include_ground_truth", "bool"),
    "tab": ("review", "tab", "bool"),
    "mirror_to_data": ("review", "mirror_to_data", "bool"),
    "escalate": ("review", "escalate", "bool"),
    "max_overlap": ("review", "max_overlap", "whole"),
    "consensus_predictions": ("review", "consensus_predictions", "bool"),
}
"""Each setting the file may hold: the options it belongs to, its field there, and its kind."""

_KINDS = {"number": "a number", "numbers": "a table of control names to numbers", "bool": "true or false",
          "text": "a string", "whole": "a whole number", "pair": "two numbers, as [2, 1]"}


@dataclass(frozen=True)
class ProjectSettings:
    """The defaults (the flags, then the top of the file) and each project's own options."""

    defaults: ProjectOptions
    projects: Mapping[int, ProjectOptions] = field(default_factory=dict)

    def for_project(self, project: int | None) -> ProjectOptions:
        """The options of ``project``: its section, else the defaults."""
        return self.projects.get(project, self.defaults) if project is not None else self.defaults


def _checked(value: Any, kind: str, key: str, where: str) -> Any:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "number" and number and math.isfinite(value):
        return float(value)
    if kind == "whole" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "text" and isinstance(value, str):
        return value
    if kind == "pair" and isinstance(value, list) and len(value) == 2 and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return float(value[0]), float(value[1])
    if kind == "numbers" and isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) for k, v in value.items()):
        return {k: float(v) for k, v in value.items()}
    raise SettingsError(f"{where}: {key} must be {_KINDS[kind]}; got {value!r:.60}.")


def _apply(options: ProjectOptions, entries: Mapping[str, Any], where: str) -> ProjectOptions:
    changes: dict[str, dict[str, Any]] = {"mapping": {}, "scoring": {}, "review": {}}
    for key, value in entries.items():
        if key not in KEYS:
            raise SettingsError(f"{where}: unknown setting {key!r}; the file may set {', '.join(KEYS)}.")
        group, name, kind = KEYS[key]
        changes[group][name] = _checked(value, kind, key, where)
    try:
        return ProjectOptions(mapping=replace(options.mapping, **changes["mapping"]),
                              scoring=replace(options.scoring, **changes["scoring"]),
                              review=replace(options.review, **changes["review"]))
    except SettingsError as error:
        raise SettingsError(f"{where}: {error}") from None


def _parse(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_SETTINGS_BYTES:
            raise SettingsError(f"The settings file {path} is larger than {MAX_SETTINGS_BYTES} bytes.")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"The settings file {path} cannot be read: {error}.") from None
    try:
        if path.suffix.lower() == ".toml":
            return tomllib.loads(text)
        if path.suffix.lower() in (".yaml", ".yml"):
            return yaml.safe_load(text) or {}
    except (tomllib.TOMLDecodeError, yaml.YAMLError, RecursionError) as error:
        reason = " ".join(str(error).split())[:200]
        raise SettingsError(f"The settings file {path} is not valid {path.suffix[1:].upper()}: {reason}") from None
    raise SettingsError(f"The settings file {path} must end in .toml, .yaml or .yml.")


def read_project_settings(path: Path, *, base: ProjectOptions) -> ProjectSettings:
    """Read the settings file at ``path`` over the options of the flags, ``base``.

    Raises
    ------
    SettingsError
        In one line, naming the file and the section: the file cannot be read or parsed, a key is unknown, a value
        has the wrong type or is out of range, or a project id is not a positive whole number.
    """
    content = _parse(path)
    if not isinstance(content, Mapping):
        raise SettingsError(f"The settings file {path} must hold a table of settings at its top.")
    top = {key: value for key, value in content.items() if key != "projects"}
    defaults = _apply(base, top, f"{path}, at the top")
    sections = content.get("projects", {})
    if not isinstance(sections, Mapping):
        raise SettingsError(f"{path}: projects must be a table of project ids to settings.")
    projects = {}
    for key, section in sections.items():
        text = str(key)
        if not text.isdigit() or int(text) < 1 or isinstance(key, bool):
            raise SettingsError(f"{path}: a project section must be named by a positive whole number; got {key!r}.")
        if not isinstance(section, Mapping):
            raise SettingsError(f"{path}: project {text} must be a table of settings.")
        projects[int(text)] = _apply(defaults, section, f"{path}, project {text}")
    return ProjectSettings(defaults=defaults, projects=projects)
