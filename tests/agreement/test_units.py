"""Units along continua: the codes units_from_frame gives, and the units Units refuses."""

import numpy as np
import pandas as pd
import pytest

from agreement.units import Units, units_from_frame

FRAME = pd.DataFrame({"doc": [7, 7, 3], "annotator": ["b", "a", "b"], "label": ["PER", "LOC", "PER"],
                      "start": [0, 2, 1], "end": [1, 4, 5]})


def test_units_from_frame_codes_docs_annotators_and_labels():
    # docs in order of first appearance (7, then 3); annotators and labels sorted; "c" annotated doc 3 and marked
    # nothing, known from present only. Lengths: each continuum's last end (4 and 5) unless given (doc 3: 10).
    units = units_from_frame(FRAME, present=pd.DataFrame({"doc": [3], "annotator": ["c"]}), lengths={3: 10})
    assert (units.docs, units.annotators, units.labels) == ((7, 3), ("a", "b", "c"), ("LOC", "PER"))
    assert units.doc.tolist() == [0, 0, 1]
    assert units.annotator.tolist() == [1, 0, 1]
    assert units.label.tolist() == [1, 0, 1]
    assert units.present.tolist() == [[True, True, False], [False, True, True]]
    assert units.lengths.tolist() == [4.0, 10.0]
    assert units.n_units == 3


def test_labels_given_keep_their_order_and_the_unused_ones():
    units = units_from_frame(FRAME, labels=["PER", "MISC", "LOC"])
    assert units.labels == ("PER", "MISC", "LOC")
    assert units.label.tolist() == [0, 2, 0]
    with pytest.raises(ValueError, match=r"The labels \['LOC'\] are not among the labels given"):
        units_from_frame(FRAME, labels=["PER"])


def test_units_from_frame_refuses_missing_columns_and_short_continua():
    with pytest.raises(ValueError, match=r"lacks the columns \['end'\]"):
        units_from_frame(FRAME.drop(columns="end"))
    with pytest.raises(ValueError, match="ends after the end of its continuum"):
        units_from_frame(FRAME, lengths={7: 3.5})  # a unit of doc 7 ends at 4


def test_select_keeps_the_continua_and_who_annotated_them():
    units = units_from_frame(FRAME)
    some = units.select(units.doc == 1)
    assert some.n_units == 1 and some.start.tolist() == [1.0]
    assert some.docs == units.docs and some.present.tolist() == units.present.tolist()


def _units(**changed):
    given = {"doc": [0, 0], "annotator": [0, 1], "label": [0, 0], "start": [0.0, 1.0], "end": [1.0, 2.0],
             "present": [[True, True]], **changed}
    return Units(np.array(given["doc"], dtype=np.intp), np.array(given["annotator"], dtype=np.intp),
                 np.array(given["label"], dtype=np.intp), np.array(given["start"]), np.array(given["end"]),
                 ("d0",), ("a", "b"), ("X",), np.array(given["present"]), np.array([2.0]))


@pytest.mark.parametrize(("changed", "message"), [
    ({"end": [1.0, 1.0]}, r"end after it starts"),
    ({"start": [-1.0, 1.0]}, "begins at 0"),
    ({"end": [1.0, np.inf]}, "finite numbers"),
    ({"present": [[True, False]]}, "must be marked present"),
    ({"label": [0]}, "one label per unit"),
    ({"present": [[True, True, True]]}, r"present must have shape \(docs, annotators\) = \(1, 2\)"),
])
def test_units_refuse_what_is_no_unit(changed, message):
    _units()  # the unchanged units are valid
    with pytest.raises(ValueError, match=message):
        _units(**changed)


@pytest.mark.parametrize(("field", "codes", "shown"), [("annotator", [1, -1, 0], "-1"), ("doc", [0, 2, 1], "2"),
                                                      ("label", [0, 0, 3], "3")])
def test_units_refuse_codes_outside_their_names(field, codes, shown):
    # a negative annotator code would index present from its end, and be counted as another continuum's annotator
    given = {"doc": [0, 1, 1], "annotator": [1, 0, 0], "label": [0, 0, 0], field: codes}
    with pytest.raises(ValueError, match=f"Every unit's {field} must be a code of one of the .*, not {shown}"):
        Units(*(np.array(given[name], dtype=np.intp) for name in ("doc", "annotator", "label")),
              np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]), ("d0", "d1"), ("a", "b"), ("X",),
              np.ones((2, 2), dtype=bool), np.array([3.0, 3.0]))
