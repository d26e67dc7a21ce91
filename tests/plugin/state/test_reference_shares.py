"""Each task's shares of the annotators' labels equal to its references' labels, against a plain count."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.state.references import GROUND_TRUTH, REFERENCE_PREFIX, task_reference_shares
from tests.profiles import examples

MODELS = ("ref:model:a", "ref:model:b", "ref:model:(no version)")
ANNOTATORS = ("1", "2", "3")


def _missing(label):
    return label is None or (isinstance(label, float) and math.isnan(label))


def _plain_shares(rows, authors, latest):
    """The shares counted pair by pair: each annotator's labelled row against each labelled reference row."""
    out = {}
    for name in ("ground_truth", "prediction"):
        for task in sorted({row[0] for row in rows}):
            reference = GROUND_TRUTH if name == "ground_truth" else latest.get(task)
            pairs = equal = 0
            for at, item, who, label in rows:
                if at != task or str(who).startswith(REFERENCE_PREFIX) or _missing(label):
                    continue
                if name == "ground_truth" and authors.get(task) == str(who):
                    continue  # a reviewer-marked ground truth is no reference for its own author
                for other_at, other_item, other_who, other_label in rows:
                    if (other_at == task and str(other_item) == str(item) and str(other_who) == reference
                            and not _missing(other_label)):
                        pairs += 1
                        equal += label == other_label
            if pairs:
                out.setdefault(task, {})[name] = round(equal / pairs, 6)
    return out


_rows = st.lists(st.tuples(st.integers(1, 3),
                           st.sampled_from(["a", "b", "1", 1, "a\x1fref:ground_truth"]),  # 1 and "1": one item
                           st.sampled_from([*ANNOTATORS, GROUND_TRUTH, *MODELS]),
                           st.sampled_from(["x", "y", None, math.nan, 1, 1.0, 2])),
                 max_size=40)


@settings(max_examples=examples(120), deadline=None)
@given(rows=_rows,
       authors=st.dictionaries(st.integers(1, 4), st.sampled_from([*ANNOTATORS, "9"]), max_size=4),
       latest=st.dictionaries(st.integers(1, 4), st.sampled_from([*MODELS, "ref:model:gone"]), max_size=5))
def test_shares_equal_a_plain_count(rows, authors, latest):
    found = task_reference_shares(rows, authors, latest)
    expected = _plain_shares(rows, authors, latest)
    assert found == expected
    assert list(found) == list(expected)  # ground truth's tasks first, in order: the blocks' keys keep their order


def test_shares_leave_out_the_author_older_models_and_missing_labels():
    rows = [(1, "1", "2", "pos"), (1, "1", "5", "neg"), (1, "1", "6", None), (1, "1", GROUND_TRUTH, "pos"),
            (1, "1", "ref:model:v1", "neg"), (1, "1", "ref:model:v2", "pos"),
            (2, "2", "2", "neg"), (2, "2", "ref:model:v1", "neg"), (2, "2", GROUND_TRUTH, math.nan),
            (3, "3", "2", "pos"), (3, "3", "5", "pos")]
    shares = task_reference_shares(rows, {1: "5"}, {1: "ref:model:v2", 2: "ref:model:v1", 3: "ref:model:v1"})
    # task 1: "5" wrote the ground truth, so "2" alone is set against it; v2 is its latest model; task 2's ground
    # truth gave no label; task 3 has no reference
    assert shares == {1: {"ground_truth": 1.0, "prediction": 0.5}, 2: {"prediction": 1.0}}
    assert task_reference_shares([], {}, {}) == {}
