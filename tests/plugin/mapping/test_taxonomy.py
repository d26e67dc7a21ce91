"""Taxonomy: the full path as a nominal label."""

from plugin.annotations import Skips, Submission
from plugin.mapping.taxonomy import map_taxonomy
from tests.plugin.conftest import FIRST, SECOND, THIRD, rows_of


def test_full_paths(controls, submissions):
    first = min(submissions)
    mapped = map_taxonomy(controls["taxonomy"], submissions, Skips())
    assert rows_of(mapped, first) == {(str(first), FIRST, "Animals / Mammals"), (str(first), SECOND, "Animals / Mammals"),
                                      (str(first), THIRD, "Plants")}


def test_several_paths_are_one_label_and_unknown_paths_are_skipped(controls):
    def submission(annotator, paths):
        return Submission(1, 1, annotator, ({"from_name": "taxonomy", "type": "taxonomy", "value": {"taxonomy": paths}},))
    skips = Skips()
    mapped = map_taxonomy(controls["taxonomy"], {1: [submission("a", [["Plants"], ["Animals", "Birds"]]),
                                                     submission("b", [["Fungi"]]), submission("c", "Plants")]}, skips)
    assert rows_of(mapped) == {("1", "a", "Animals / Birds | Plants")}
    assert skips.total == 2
