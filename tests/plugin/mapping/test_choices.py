"""Choices (single, multiple) and Pairwise on recorded results."""

from plugin.annotations import Skips, Submission
from plugin.mapping.choices import map_choices, map_pairwise
from tests.plugin.conftest import FIRST, SECOND, THIRD, rows_of


def test_single_choice_is_one_item_per_task(controls, submissions):
    first = min(submissions)
    mapped = map_choices(controls["sentiment"], submissions, Skips())
    assert mapped.level == "nominal" and mapped.categories == ("positive", "negative", "neutral")
    assert rows_of(mapped, first) == {(str(first), FIRST, "positive"), (str(first), SECOND, "positive"),
                                      (str(first), THIRD, "negative")}


def test_multiple_choices_give_ranked_labels_and_yes_no_items(controls, submissions):
    first = min(submissions)
    mapped = map_choices(controls["topics"], submissions, Skips())
    assert mapped.categories == ("no", "yes")
    rows = rows_of(mapped, first)
    assert (f"{first}:sports", THIRD, "yes") in rows and (f"{first}:politics", THIRD, "no") in rows
    assert {(r[0], r[2]) for r in rows if r[1] == FIRST} == {(f"{first}:sports", "yes"),
                                                              (f"{first}:politics", "yes"), (f"{first}:tech", "no")}
    ranked = mapped.ranked[mapped.ranked["task"] == first]
    by_annotator = {a: list(g.sort_values("rank")["label"]) for a, g in ranked.groupby("annotator")}
    assert by_annotator == {FIRST: ["sports", "politics"], SECOND: ["politics", "sports"], THIRD: ["sports"]}


def test_labels_outside_the_config_and_broken_values_are_skipped(controls):
    def submission(annotator, value):
        return Submission(1, 1, annotator, ({"from_name": "sentiment", "type": "choices", "value": value},))
    skips = Skips()
    mapped = map_choices(controls["sentiment"], {1: [submission("a", {"choices": ["joy"]}),
                                                     submission("b", {"choices": "positive"}),
                                                     submission("c", {"choices": ["positive", "negative"]}),
                                                     submission("d", {"choices": ["neutral"]})]}, skips)
    assert rows_of(mapped) == {("1", "d", "neutral")}
    assert skips.reasons == {"label 'joy' not in the config of 'sentiment'": 1, "malformed choices in 'sentiment'": 1,
                             "several choices in the single-choice control 'sentiment'": 1}


def test_pairwise(controls, submissions):
    first = min(submissions)
    mapped = map_pairwise(controls["preference"], submissions, Skips())
    assert rows_of(mapped, first) == {(str(first), FIRST, "left"), (str(first), SECOND, "left"),
                                      (str(first), THIRD, "right")}
