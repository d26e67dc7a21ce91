"""Rating (ordinal) and Number (interval): the task is the item, the number the label."""

from __future__ import annotations

import math
from collections.abc import Mapping

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.base import MappedControl, control_results

__all__ = ["map_number", "map_rating"]


def map_rating(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a Rating control; ratings outside 1..maxRating are skipped."""
    rows = []
    for task, task_submissions in submissions.items():
        for submission in task_submissions:
            for result in control_results(submission, control, skips):
                rating = result["value"].get("rating")
                if isinstance(rating, bool) or not isinstance(rating, (int, float)) or rating != int(rating):
                    skips.add(f"rating that is not a whole number in {control.name!r}")
                    continue
                if not 1 <= rating <= control.max_rating:
                    skips.add(f"rating outside 1..{control.max_rating} in {control.name!r}")
                    continue
                rows.append((task, str(task), submission.annotator, int(rating)))
                break
    return MappedControl(control, "ordinal", tuple(rows), categories=tuple(range(1, control.max_rating + 1)))


def map_number(control: Control, submissions: Mapping[int, list[Submission]], skips: Skips) -> MappedControl:
    """Map a Number control; values that are not finite numbers are skipped."""
    rows = []
    for task, task_submissions in submissions.items():
        for submission in task_submissions:
            for result in control_results(submission, control, skips):
                number = result["value"].get("number")
                if isinstance(number, str):
                    try:
                        number = float(number)
                    except ValueError:
                        number = None
                if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
                    skips.add(f"number that is not a finite number in {control.name!r}")
                    continue
                rows.append((task, str(task), submission.annotator, float(number)))
                break
    return MappedControl(control, "interval", tuple(rows))
