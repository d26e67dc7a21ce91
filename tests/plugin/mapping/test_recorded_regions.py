"""Region families on results recorded from Label Studio 1.23.2 (tests/data/region_tasks.json, record_regions.py).

Annotators 0 and 1 of the recording drew the same regions (keypoints half a
percent apart); annotator 2 differs on every control.
"""

import json

import pytest

from agreement import label_counts, spa
from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, collect_submissions
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions
from tests.plugin.conftest import DATA

# Users as recorded (a fresh server): the three annotators who signed up got ids 2, 3 and 4.
SAME, ALSO_SAME, OTHER = "2", "3", "4"
NOT_SCORED = {"bbox", "videoLabels"}  # the OCR tool's regions all carry a label; the video's labels are in its tracks


@pytest.fixture(scope="module")
def mapped():
    recorded = json.loads((DATA / "region_tasks.json").read_text())
    skips = Skips()
    out = map_project(parse_label_config(recorded["label_config"]), collect_submissions(recorded["tasks"], skips),
                      skips, MappingOptions())
    assert skips.total == 0, skips.as_dict()
    return out


def test_every_control_is_scored(mapped):
    assert {name for name, m in mapped.items() if m.records} == set(mapped) - NOT_SCORED


@pytest.mark.parametrize("name", ["poly", "kp", "ell", "brush", "label", "transcription", "relations", "track",
                                  "timeline", "speaker", "events", "mood", "topics", "when", "rank"])
def test_the_two_who_agree_agree_and_the_third_does_not(mapped, name):
    rows = mapped[name].rows
    pair = rows[rows["annotator"].isin([SAME, ALSO_SAME])]
    assert spa(label_counts(pair, categories=mapped[name].categories)) == pytest.approx(1.0)
    everyone = spa(label_counts(rows, categories=mapped[name].categories))
    assert everyone < 1.0


def test_values_as_recorded(mapped):
    first = min(mapped["when"].rows["task"])
    # DateTime "2024-05-01" is day 19844 since 1970-01-01.
    assert {r[2]: r[3] for r in mapped["when"].records if r[0] == first} == {SAME: 19844.0, ALSO_SAME: 19844.0,
                                                                             OTHER: 19875.0}
    # The audio spans 2.6-2.9 s and 1.25-2.5 s stay apart (the truncation merged spans within one second).
    assert sorted({r[1].split(":", 1)[1] for r in mapped["speaker"].records if r[0] == first}) == ["0:1.25-2.5",
                                                                                                   "0:2.6-2.9"]
