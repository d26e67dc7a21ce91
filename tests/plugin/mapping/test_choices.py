"""Choices (single, multiple) and Pairwise on recorded results."""

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.choices import split_label_items
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions
from tests.plugin.conftest import FIRST, SECOND, THIRD, map_one, rows_of
from tests.profiles import examples


def test_single_choice_is_one_item_per_task(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "sentiment", skips=Skips())
    assert mapped.level == "nominal" and mapped.categories == ("positive", "negative", "neutral")
    assert rows_of(mapped, first) == {(str(first), FIRST, "positive"), (str(first), SECOND, "positive"),
                                      (str(first), THIRD, "negative")}


def test_multiple_choices_give_ranked_labels_and_yes_no_items(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "topics", skips=Skips())
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
    mapped = map_one(controls, {1: [submission("a", {"choices": ["joy"]}),
                                    submission("b", {"choices": "positive"}),
                                    submission("c", {"choices": ["positive", "negative"]}),
                                    submission("d", {"choices": ["neutral"]})]}, "sentiment", skips=skips)
    assert rows_of(mapped) == {("1", "d", "neutral")}
    assert skips.as_dict() == {
        "label not in the config ('joy'): Choices 'sentiment'": 1,
        "malformed value (choices is not a list of text): Choices 'sentiment'": 1,
        "malformed value (several choices in a single-choice control): Choices 'sentiment'": 1}


def test_an_empty_selection_stored_is_counted_and_read_as_none():
    """A result ``{"choices": []}`` gave no row and no skip: dropped silently (the fuzz of exports found it). It
    is counted as malformed; in a multiple-choice control its annotator still says "no" to every label."""
    config = ('<View><Text name="t" value="$t"/><Choices name="one" toName="t"><Choice value="x"/></Choices>'
              '<Choices name="many" toName="t" choice="multiple"><Choice value="x"/><Choice value="y"/></Choices>'
              '<Choices name="free" toName="t" choice="multiple"/></View>')
    results = tuple({"from_name": name, "type": "choices", "value": {"choices": []}} for name in ("one", "many", "free"))
    skips = Skips()
    mapped = map_project(parse_label_config(config), {1: [Submission(1, 1, "a", results)]}, skips, MappingOptions())
    assert rows_of(mapped["one"]) == rows_of(mapped["free"]) == set()
    assert rows_of(mapped["many"]) == {("1:x", "a", "no"), ("1:y", "a", "no")}
    assert skips.as_dict() == {f"malformed value (no choice selected): Choices {name!r}": 1
                               for name in ("one", "many", "free")}


def test_alias_is_what_results_hold():
    # Label Studio stores a Choice's alias in results (docs: Choice tag, attribute alias).
    controls = parse_label_config('<View><Text name="t" value="$t"/><Choices name="c" toName="t">'
                                  '<Choice value="Positive sentiment" alias="pos"/><Choice value="Negative" alias="neg"/>'
                                  '</Choices></View>')
    result = {"from_name": "c", "type": "choices", "value": {"choices": ["pos"]}}
    skips = Skips()
    mapped = map_one(controls, {1: [Submission(1, 1, "a", (result,))]}, "c", skips=skips)
    assert rows_of(mapped) == {("1", "a", "pos")} and skips.total == 0
    assert mapped.categories == ("pos", "neg")


def test_repeated_controls_are_one_item_each():
    controls = parse_label_config('<View><Repeater on="$images"><Image name="image_{{idx}}" value="$images[{{idx}}].url"/>'
                                  '<Choices name="action_{{idx}}" toName="image_{{idx}}"><Choice value="run"/>'
                                  '<Choice value="walk"/></Choices></Repeater></View>')
    def answer(index, label):
        return {"from_name": f"action_{index}", "type": "choices", "value": {"choices": [label]}}
    submissions = {1: [Submission(1, 1, "a", (answer(0, "run"), answer(1, "walk"))),
                       Submission(1, 2, "b", (answer(0, "run"), answer(1, "run")))]}
    skips = Skips()
    mapped = map_one(controls, submissions, "action_{{idx}}", skips=skips)
    assert rows_of(mapped) == {("1:action_0", "a", "run"), ("1:action_0", "b", "run"),
                               ("1:action_1", "a", "walk"), ("1:action_1", "b", "run")}
    assert skips.total == 0


def test_pairwise(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "preference", skips=Skips())
    assert rows_of(mapped, first) == {(str(first), FIRST, "left"), (str(first), SECOND, "left"),
                                      (str(first), THIRD, "right")}


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.text(alphabet="ab:7", max_size=6), max_size=12),
       st.lists(st.text(alphabet="ab", min_size=1, max_size=3), max_size=3))
def test_label_items_split_at_the_last_colon_as_the_suffix_match_does(items, labels):
    # colon-free labels take one pass over the items; a label with a colon (never matching here) takes the
    # suffix match, label by label: both split every item alike
    series = pd.Series(items, dtype=object)
    fast = split_label_items(series, labels)
    general = split_label_items(series, [*labels, "zz:never"])
    categorical = split_label_items(series.astype("category"), labels)
    assert fast[0].tolist() == general[0].tolist() == categorical[0].tolist()
    assert fast[1].tolist() == general[1].tolist() == categorical[1].tolist()
