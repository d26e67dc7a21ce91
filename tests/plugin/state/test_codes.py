"""A task's rows as codes (plugin.state.codes) and the compact task entry: what goes in comes out."""

from collections import Counter
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugin.mapping.annotations import Submission
from plugin.state.codes import (
    NARROW,
    WIDE,
    IdIndex,
    Interned,
    ItemKeys,
    item_counts,
    pack_codes,
    pack_floats,
    pack_rows,
    stacked_rows,
    unpack_numbers,
    unpack_rows,
)
from plugin.state.project import TaskEntry

keys = st.one_of(st.text(max_size=6), st.integers(-5, 5), st.tuples(st.text(max_size=3), st.integers(0, 3)))


@pytest.mark.parametrize(("edge", "width"), [(32767, 2), (-32768, 2), (32768, 4), (-32769, 4), (2**31 - 1, 4)])
def test_codes_are_int16_up_to_its_edges_and_int32_past_them(edge, width):
    """A task's codes take two bytes each while every one fits int16, four once one does not; they read back."""
    blob = pack_codes([0, edge, 5])
    assert blob[0] == (NARROW if width == 2 else WIDE) and len(blob) == width * 4
    assert unpack_numbers(blob, narrow=np.int16, wide=np.int32).tolist() == [0, edge, 5]


@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64), st.floats(width=32),
                         st.integers(-2**25, 2**25)), max_size=8))
def test_numbers_are_float32_exactly_when_numpy_reads_them_back_with_the_same_bits(values):
    """float32 is the layout where numpy's own round trip through float32 gives every value's bits back (NaN, inf,
    -0.0, 2**24 + 1 included); the values read back as float64 with their bits."""
    wide = np.array(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        narrow = wide.astype(np.float32).astype(np.float64).tobytes() == wide.tobytes()
    blob = pack_floats(values)
    assert blob[0] == (NARROW if narrow else WIDE) and len(blob) == (4 if narrow else 8) * (1 + len(values))
    assert unpack_numbers(blob, narrow=np.float32, wide=np.float64).tobytes() == wide.tobytes()


@given(st.integers(-10**12, 10**12), st.lists(st.one_of(keys, st.text(max_size=6).map(lambda s: "@" + s)),
                                              max_size=8))
def test_item_keys_decode_to_what_was_coded(task, raw):
    """Any key, on any task, decodes to itself; a key that starts with the task's id is kept as the rest."""
    table = ItemKeys()
    items = [k.replace("@", str(task), 1) if isinstance(k, str) and k.startswith("@") else k for k in raw]
    codes = [table.code(str(task), item) for item in items]
    assert table.decode(task, codes) == tuple(items)
    assert all((c >= 0) == (isinstance(i, str) and i.startswith(str(task))) for c, i in zip(codes, items, strict=True))


@given(st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([0, 4, 40_000, 2**31 - 1]),
                                               st.integers(0, 6)), max_size=12), st.sampled_from([100, -70_000])),
                min_size=1, max_size=6))
def test_item_counts_equal_a_count_of_the_rows(tasks):
    """Every blob's items' counts (CSR) are the rows counted per item and label, whatever the order of the rows;
    blobs of int16 and of int32 codes (an annotator's or a key's code beyond int16) mixed."""
    blobs, expected = [], []
    for rows, first_key in tasks:
        places = sorted({place for place, _, _ in rows})
        renumber = {place: i for i, place in enumerate(places)}
        flat = [v for place, who, column in rows for v in (renumber[place], who, column)]
        keys = list(range(first_key, first_key + len(places)))
        blob = pack_rows(keys, flat)
        narrow = all(-2**15 <= v < 2**15 for v in [*keys, *flat])
        assert len(blob) == (2 if narrow else 4) * (2 + len(keys) + len(flat))
        codes, decoded = unpack_rows(blob, 3)
        assert codes.tolist() == keys and decoded.ravel().tolist() == flat
        blobs.append(blob)
        for i in range(len(places)):
            counted = Counter(column for place, _, column in rows if renumber[place] == i)
            expected.append(sorted(counted.items()))
    counted, per_blob = item_counts(blobs)
    indptr, columns, counts = counted.indptr, counted.columns, counted.counts
    got = [list(zip(columns[a:b].tolist(), counts[a:b].astype(int).tolist(), strict=True))
           for a, b in pairwise(indptr.tolist())]
    assert got == expected
    assert per_blob.tolist() == [len({p for p, _, _ in rows}) for rows, _ in tasks]
    rows, _, n_rows, key_codes = stacked_rows(blobs, 3)
    assert n_rows.tolist() == [len(task_rows) for task_rows, _ in tasks]
    assert rows[:, 1:].ravel().tolist() == [v for task_rows, _ in tasks for _, who, column in task_rows
                                            for v in (who, column)]
    assert key_codes.tolist() == [k for task_rows, first in tasks for k in range(first, first +
                                                                               len({p for p, _, _ in task_rows}))]


@given(st.lists(st.tuples(st.integers(1, 6), st.lists(st.integers(0, 40), max_size=5)), max_size=300))
def test_id_index_equals_a_dict(events):
    """Any stream of tasks read again (ids added and dropped), with merges along the way, answers as a dict."""
    index, model, held = IdIndex(), {}, {}
    index._MERGE_AT = 3  # merge often
    for task, ids in events:
        ids = list(dict.fromkeys(ids))
        old = held.get(task, [])
        index.set(task, old, ids)
        for gone in set(old) - set(ids):
            model.pop(gone, None)
        model.update(dict.fromkeys(ids, task))
        held[task] = ids
    assert {a: index.get(a) for a in range(41)} == {a: model.get(a) for a in range(41)}
    assert len(index) == len(model)


def test_interned_values_keep_their_first_code():
    table = Interned()
    assert [table.code(v) for v in ("b", "a", "b", ("t", 1))] == [0, 1, 0, 2]
    assert table.values == ["b", "a", ("t", 1)]


def test_a_task_entry_gives_back_what_it_was_read_with():
    """Annotators, times (in UTC, the same instants), ids and the meta's agreement block survive the packing; a time
    that does not read as ISO 8601 is kept as read."""
    people = Interned()
    task = {"id": 5, "meta": {"agreement": {"alpha": 0.5, "flagged": True}, "other": [1]}, "overlap": 3,
            "data": {"agreement_score": 0.25}}
    counted = [Submission(task=5, annotation=10, annotator="ann", results=(), created_at="2026-01-05T10:00:00+01:00"),
               Submission(task=5, annotation=11, annotator="bob", results=(), created_at="2026-01-05T09:30:00.25Z")]
    entry = TaskEntry.of(task, counted, (10, 11, 12), people=people, skips=None)
    assert entry.annotators == ("ann", "bob") and entry.n_annotations == 2 and entry.annotations == (10, 11, 12)
    assert entry.created == ("2026-01-05T09:00:00Z", "2026-01-05T09:30:00.250000Z")
    assert entry.read.meta == {"agreement": {"alpha": 0.5, "flagged": True}}
    assert (entry.read.data_score, entry.read.overlap) == (0.25, 3)
    odd = [Submission(task=5, annotation=13, annotator="ann", results=(), created_at="yesterday")]
    other = TaskEntry.of({"id": 6, "meta": "not a dict"}, odd, (13,), people=people, skips=Counter(x=1))
    assert other.created == ("yesterday",) and other.annotators == ("ann",) and other.read.meta == "not a dict"
    assert people.values == ["ann", "bob"] and other.skips == {"x": 1}
    assert np.frombuffer(entry.codes, dtype=np.int64)[0] == 2
    bare = [TaskEntry.of({"id": 7 + k, **({"meta": {}} if k % 2 else {})}, odd, (), people=people, skips=None)
            for k in range(4)]
    assert bare[0].meta is bare[2].meta and bare[1].meta is bare[3].meta  # one key of each, shared
    assert [entry.read.meta for entry in bare] == [None, {}, None, {}]


def test_a_categorical_over_distinct_names_is_the_same_with_or_without_pandas_fast_path(monkeypatch):
    import pandas as pd

    from plugin.state.codes import categorical

    names = np.array(["17:b", "17:a", "18"], dtype=object)
    codes = np.array([2, 0, 0, 1])
    fast = categorical(codes, names)
    monkeypatch.delattr(pd.CategoricalDtype, "_from_fastpath", raising=False)
    checked = categorical(codes, names)
    for got in (fast, checked):
        assert list(got) == ["18", "17:b", "17:b", "17:a"] and list(got.categories) == list(names)
    pd.testing.assert_series_equal(pd.Series(fast), pd.Series(checked))
