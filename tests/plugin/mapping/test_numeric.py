"""Rating (ordinal) and Number (interval)."""

from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, Submission, collect_submissions
from plugin.mapping.labelconfig import Control, infer_controls
from plugin.settings import MappingOptions
from tests.plugin.conftest import FIRST, SECOND, THIRD, map_one, rows_of


def test_rating_is_ordinal_over_one_to_max(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "quality", skips=Skips())
    assert mapped.level == "ordinal" and mapped.categories == (1, 2, 3, 4, 5)
    assert rows_of(mapped, first) == {(str(first), FIRST, 4), (str(first), SECOND, 5), (str(first), THIRD, 4)}


def test_number_is_interval(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "score", skips=Skips())
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
    mapped = map_project({"q": rating, "n": number}, submissions, skips, MappingOptions())
    assert rows_of(mapped["q"]) == {("1", "c", 3)}
    assert rows_of(mapped["n"]) == {("1", "c", 4.5)}
    assert skips.total == 4


def test_a_huge_rating_without_a_config_allocates_nothing_for_the_range():
    # The case: a rating of 10**9 read without a config was killed at 23 GB.
    tasks = [{"id": 1, "annotations": [
        {"id": 1, "completed_by": 1, "result": [{"from_name": "q", "type": "rating", "value": {"rating": 10**9}}]},
        {"id": 2, "completed_by": 2, "result": [{"from_name": "q", "type": "rating", "value": {"rating": 3}}]}]}]
    controls = infer_controls(tasks)
    mapped = map_project(controls, collect_submissions(tasks, Skips()), Skips(), MappingOptions())["q"]
    assert mapped.categories is None
    assert rows_of(mapped) == {("1", "1", 10**9), ("1", "2", 3)}
    huge = Control("q", "rating", max_rating=10**9)
    assert huge.rating_categories is None


def test_numbers_a_float_cannot_hold_or_whose_squares_overflow_are_skipped():
    """A number of 1e300 overflowed interval alpha's squared differences (the control was not scored), and an
    integer of 400 digits, which JSON allows and Python reads exactly, raised OverflowError in the mapping (the
    fuzz of exports found both): each is skipped with its reason; 1e100 is still scored."""
    def result(name, kind, value):
        return {"from_name": name, "type": kind, "value": value}
    controls = {"q": Control("q", "rating", max_rating=5), "free": Control("free", "rating", max_rating=0),
                "n": Control("n", "number")}
    submissions = {1: [Submission(1, 1, "a", (result("q", "rating", {"rating": 10**400}),
                                              result("free", "rating", {"rating": 10**400}),
                                              result("n", "number", {"number": 1e300}))),
                       Submission(1, 2, "b", (result("q", "rating", {"rating": -(10**400)}),
                                              result("n", "number", {"number": 10**400}))),
                       Submission(1, 3, "c", (result("q", "rating", {"rating": 4}),
                                              result("n", "number", {"number": 1e100})))]}
    skips = Skips()
    mapped = map_project(controls, submissions, skips, MappingOptions())
    assert rows_of(mapped["q"]) == {("1", "c", 4)} and rows_of(mapped["free"]) == set()
    assert rows_of(mapped["n"]) == {("1", "c", 1e100)}
    assert skips.as_dict() == {"malformed value (rating outside 1..5): Rating 'q'": 2,
                               "malformed value (rating outside 1..maxRating): Rating 'free'": 1,
                               "malformed value (number beyond ±1e+100, whose squared differences overflow): "
                               "Number 'n'": 2}
