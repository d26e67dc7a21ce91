"""Rating (ordinal) and Number (interval)."""

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping.numeric import map_number, map_rating
from tests.plugin.conftest import FIRST, SECOND, THIRD, rows_of


def test_rating_is_ordinal_over_one_to_max(controls, submissions):
    first = min(submissions)
    mapped = map_rating(controls["quality"], submissions, Skips())
    assert mapped.level == "ordinal" and mapped.categories == (1, 2, 3, 4, 5)
    assert rows_of(mapped, first) == {(str(first), FIRST, 4), (str(first), SECOND, 5), (str(first), THIRD, 4)}


def test_number_is_interval(controls, submissions):
    first = min(submissions)
    mapped = map_number(controls["score"], submissions, Skips())
    assert mapped.level == "interval" and mapped.categories is None
    assert rows_of(mapped, first) == {(str(first), FIRST, 70.0), (str(first), SECOND, 72.5), (str(first), THIRD, 90.0)}


def test_out_of_range_and_broken_numbers_are_skipped():
    def result(name, kind, value):
        return {"from_name": name, "type": kind, "value": value}
    rating = Control("q", "rating", max_rating=5)
    number = Control("n", "number")
    submissions = {1: [Submission(1, 1, "a", (result("q", "rating", {"rating": 9}), result("n", "number", {"number": "nan"}))),
                       Submission(1, 2, "b", (result("q", "rating", {"rating": 2.5}), result("n", "number", {"number": None}))),
                       Submission(1, 3, "c", (result("q", "rating", {"rating": 3}), result("n", "number", {"number": "4.5"})))]}
    skips = Skips()
    assert rows_of(map_rating(rating, submissions, skips)) == {("1", "c", 3)}
    assert rows_of(map_number(number, submissions, skips)) == {("1", "c", 4.5)}
    assert skips.total == 4
