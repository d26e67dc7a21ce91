"""Every labeling template Label Studio ships, mapped and scored (tests/data/templates, sources in SOURCES).

Two annotators with identical results agree perfectly on every control of
every template; one annotator's results perturbed agree less.
"""

import math

import pytest

from agreement import label_counts, spa
from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions
from tests.plugin.conftest import DATA
from tests.plugin.template_results import results_for

TEMPLATES = sorted((DATA / "templates").glob("*.xml"))
# Per-region answers on Chat messages need the message regions of Label Studio Enterprise's Chat tag, whose stored
# shape this project has not seen: they are counted as skipped, with the reason.
NOT_SCORED = {"chat"}


def _score(mapped):
    if not mapped.records:
        return math.nan
    counts = label_counts(mapped.rows, categories=mapped.categories)
    return spa(counts)


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.stem)
def test_template_is_mapped_and_scored(path):
    controls = parse_label_config(path.read_text())
    same = {1: [Submission(1, 1, "a", tuple(results_for(controls, 0))),
                Submission(1, 2, "b", tuple(results_for(controls, 0)))]}
    other = {1: [Submission(1, 1, "a", tuple(results_for(controls, 0))),
                 Submission(1, 2, "b", tuple(results_for(controls, 1)))]}
    skips = Skips()
    agreed = map_project(controls, same, skips, MappingOptions())
    differed = map_project(controls, other, Skips(), MappingOptions())
    chat = "<Chat" in path.read_text()
    for name, control in controls.items():
        if control.tag in NOT_SCORED or (chat and control.per_region):
            assert agreed[name].records == () , name
            continue
        assert agreed[name].records, f"{path.stem}: {name} has no rows"
        assert _score(agreed[name]) == pytest.approx(1.0), f"{path.stem}: {name}"
        perturbed = _score(differed[name])
        assert math.isnan(perturbed) or perturbed < 1.0, f"{path.stem}: {name} {perturbed}"
        assert set(differed[name].records) != set(agreed[name].records), f"{path.stem}: {name}"
    if not chat:
        assert skips.total == 0, skips.as_dict()
