"""Hand-made results for the mapping tests."""

from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions


def result(name, kind, value, rid=None, **extra):
    out = {"from_name": name, "to_name": "image", "type": kind, "value": value, **extra}
    if rid is not None:
        out["id"] = rid
    return out


def submissions_of(*per_annotator, task=1):
    """``{task: [Submission]}`` with annotators "a", "b", ... holding the given result lists."""
    return {task: [Submission(task, i + 1, chr(ord("a") + i), tuple(results)) for i, results in enumerate(per_annotator)]}


def run(config, submissions, options=None):
    skips = Skips()
    mapped = map_project(parse_label_config(config), submissions, skips, options or MappingOptions())
    return mapped, skips


def items(mapped):
    """``{item: {annotator: label}}``."""
    out = {}
    for _, item, annotator, label in mapped.records:
        out.setdefault(item, {})[annotator] = label
    return out


def grouping(mapped):
    """The items as sorted tuples of (annotator, label), without their names."""
    return sorted(tuple(sorted(v.items())) for v in items(mapped).values())
