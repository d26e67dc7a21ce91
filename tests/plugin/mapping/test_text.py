"""TextArea: normalized text."""

from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.labelconfig import Control
from plugin.mapping.text import MAX_TEXT
from tests.plugin.conftest import FIRST, SECOND, THIRD, map_one, rows_of


def test_normalized_texts_agree(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "summary", skips=Skips())
    assert rows_of(mapped, first) == {(str(first), FIRST, "alice works at acme."),
                                      (str(first), SECOND, "alice works at acme."), (str(first), THIRD, "about paris")}


def test_empty_huge_and_broken_texts_are_skipped():
    control = Control("summary", "textarea")
    def submission(annotator, text):
        return Submission(1, 1, annotator, ({"from_name": "summary", "type": "textarea", "value": {"text": text}},))
    skips = Skips()
    mapped = map_one({"summary": control}, {1: [submission("a", ["  "]), submission("b", ["x" * (MAX_TEXT + 1)]),
                                        submission("c", [3]), submission("d", "Fine")]}, "summary", skips=skips)
    assert rows_of(mapped) == {("1", "d", "fine")}
    assert skips.total == 3
