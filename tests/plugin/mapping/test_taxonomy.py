"""Taxonomy: one yes/no item per path selected by anyone on the task."""

from plugin.mapping.annotations import Skips, Submission
from tests.plugin.conftest import FIRST, SECOND, THIRD, map_one, rows_of


def test_each_selected_path_is_a_yes_no_item(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "taxonomy", skips=Skips())
    mammals, plants = f"{first}:Animals / Mammals", f"{first}:Plants"
    assert mapped.categories == ("no", "yes")
    assert rows_of(mapped, first) == {(mammals, FIRST, "yes"), (mammals, SECOND, "yes"), (mammals, THIRD, "no"),
                                      (plants, FIRST, "no"), (plants, SECOND, "no"), (plants, THIRD, "yes")}


def test_several_paths_are_several_items_and_unknown_paths_are_skipped(controls):
    def submission(annotator, paths):
        return Submission(1, 1, annotator, ({"from_name": "taxonomy", "type": "taxonomy", "value": {"taxonomy": paths}},))
    skips = Skips()
    mapped = map_one(controls, {1: [submission("a", [["Plants"], ["Animals", "Birds"]]),
                                    submission("b", [["Fungi"], ["Plants"]]), submission("c", "Plants")]}, "taxonomy",
                     skips=skips)
    assert rows_of(mapped) == {("1:Plants", "a", "yes"), ("1:Animals / Birds", "a", "yes"),
                               ("1:Plants", "b", "yes"), ("1:Animals / Birds", "b", "no"),
                               ("1:Plants", "c", "no"), ("1:Animals / Birds", "c", "no")}
    assert skips.as_dict() == {"label not in the config ('Fungi'): Taxonomy 'taxonomy'": 1,
                               "malformed value (taxonomy is not a list of paths): Taxonomy 'taxonomy'": 1}
