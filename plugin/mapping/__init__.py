"""From Label Studio results to items with one label per annotator, one module per family of tags.

=================================== ================= =========================
tag                                 module            level
=================================== ================= =========================
Choices (single), Pairwise          choices           nominal
Choices (multiple)                  choices           nominal (yes/no per label)
Labels, HyperTextLabels,            spans             nominal
ParagraphLabels
Rating                              numeric           ordinal
Number                              numeric           interval
Taxonomy                            taxonomy          nominal
TextArea                            text              nominal
RectangleLabels                     boxes             nominal
=================================== ================= =========================
"""

from __future__ import annotations

from collections.abc import Mapping

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl
from plugin.mapping.boxes import map_boxes
from plugin.mapping.choices import map_choices, map_pairwise
from plugin.mapping.numeric import map_number, map_rating
from plugin.mapping.spans import map_spans
from plugin.mapping.taxonomy import map_taxonomy
from plugin.mapping.text import map_textarea
from plugin.settings import MappingOptions

__all__ = ["MappedControl", "map_control", "map_project"]


def map_control(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips,
                options: MappingOptions) -> MappedControl:
    """Map one control's results of every task into items; see the module table."""
    if control.tag in ("labels", "hypertextlabels", "paragraphlabels"):
        return map_spans(control, submissions, skips, options)
    if control.tag == "rectanglelabels":
        return map_boxes(control, submissions, skips, options)
    simple = {
        "choices": map_choices,
        "pairwise": map_pairwise,
        "rating": map_rating,
        "number": map_number,
        "taxonomy": map_taxonomy,
        "textarea": map_textarea,
    }
    return simple[control.tag](control, submissions, skips)


def map_project(controls: Mapping[str, Control], submissions: Mapping[int, list[Submission]], skips: Skips,
                options: MappingOptions) -> dict[str, MappedControl]:
    """Map every control of a project, for the tasks in ``submissions`` (all of them, or one).

    The one entry point of the mapping: a batch read maps every task at once,
    a live update maps the one task it touched, and both give the same items.
    Controls that hang on others (per-region attributes, relations) see them
    all here.
    """
    return {name: map_control(control, submissions, skips, options) for name, control in sorted(controls.items())}
