"""A control's packed rows decoded for a full scoring: as codes to score, or as a table in words for a report.

:class:`plugin.state.control.ControlState` holds each task's rows packed (:mod:`plugin.state.codes`); these
functions turn every task's rows, decoded at once (:func:`plugin.state.codes.stacked_rows`), into what the project's
measures read (:class:`plugin.mapping.coded.CodedRows`) and into the table a report reads, with numpy and no tuple
per row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from agreement.uniques import narrowest, unique_inverse
from plugin.mapping.coded import CodedRows, RankedItems, name_order
from plugin.state.codes import ItemKeys, Stacked, answered, categorical, stacked_rows

__all__ = ["annotator_column", "by_task", "coded_rows", "decoded_table", "label_column"]


def label_column(values: Sequence[Any], codes: np.ndarray) -> Any:
    """The labels of ``codes``, of the type pandas infers for a list of them.

    Ratings give int64; text gives pandas' string type where it infers one. The type is inferred from the distinct
    labels used, then taken for every row.
    """
    if not len(codes):
        return []  # what pandas makes of no rows, as before
    used, place = unique_inverse(codes)
    return pd.Series([values[code] for code in used.tolist()]).array.take(place)


def by_task(blobs: Mapping[int, bytes]) -> tuple[list[int], list[bytes]]:
    """The tasks of ``blobs`` in order, and their blobs: what a table is decoded from later.

    Two lists: a copy of a million tasks' dict would be tens of MB more.
    """
    tasks = sorted(blobs)
    return tasks, [blobs[task] for task in tasks]


def annotator_column(annotators: Sequence[Any], codes: np.ndarray) -> pd.Categorical:
    """The annotators of rows by code, as a categorical over their names in sorted order.

    Every grouping, sort and deduplication by annotator then reads integer codes, in the order the names would
    sort.
    """
    names, place = name_order(annotators)
    return categorical(place[codes], names)


def decoded_table(blobs: tuple[list[int], list[bytes]], columns: Sequence[str], *, keys: ItemKeys,
                  labels: Sequence[Any], annotators: Sequence[Any]) -> pd.DataFrame:
    """Tasks' rows as one table, tasks in order: ``blobs`` are the tasks in order and their blobs (:func:`by_task`).

    What :func:`plugin.mapping.base.frame` makes of the same rows as tuples. ``labels`` and ``annotators`` are the
    values by code (as they stood when ``blobs`` were taken), ``keys`` the control's item keys.
    """
    tasks, held = blobs
    rows, n_items, n_rows, item_keys = stacked_rows(held, len(columns) - 1)
    ids = np.array(tasks, dtype=np.int64)
    # items as a categorical over their distinct names: every later grouping by item reads integer codes
    texts = keys.texts(np.repeat(ids, n_items), item_keys)
    if keys.texts_distinct(item_keys):  # every item its own name: its place is its code
        item, names = rows[:, 0], texts
    else:
        codes, names = pd.factorize(texts)
        item = codes[rows[:, 0]]
    out = {"task": np.repeat(ids, n_rows), "item": categorical(item, names),
           "annotator": annotator_column(annotators, rows[:, 1]), "label": label_column(labels, rows[:, 2])}
    if len(columns) > 4:
        out[columns[4]] = rows[:, 3].astype(np.int64)
    return pd.DataFrame(out, columns=list(columns))


def coded_rows(stacked: Stacked, *, keys: ItemKeys, labels: Sequence[Any], annotators: Sequence[Any],
               ranked: RankedItems | None = None) -> CodedRows:
    """Rows decoded at once (:meth:`plugin.state.control.ControlState.stacked`) as :class:`CodedRows`.

    An item's kind is its key without its task: a key code from 0 is a suffix shared by every task, one below 0 a
    key of its own (:class:`plugin.state.codes.ItemKeys`), put in words as the table would. Codes are held in the
    narrowest integer type (:func:`agreement.uniques.narrowest`).
    """
    rows, _, _, item_keys = stacked.rows
    suffixes = tuple(keys.suffixes.values)
    n_kinds = len(suffixes) + len(keys.others.values)
    kinds = narrowest(np.where(item_keys >= 0, item_keys, len(suffixes) - 1 - item_keys), n_kinds)
    return CodedRows(item=narrowest(rows[:, 0], len(item_keys)), annotator=narrowest(rows[:, 1], len(annotators)),
                     label=narrowest(rows[:, 2], len(labels)), labels=tuple(labels),
                     annotators=tuple(str(a) for a in annotators), item_kinds=kinds,
                     kinds=(*suffixes, *(str(key) for key in keys.others.values)), ranked=ranked,
                     n_answered=answered(rows, stacked.rows[2]))
