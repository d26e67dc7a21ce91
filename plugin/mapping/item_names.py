"""Item names of label sets: ``"{item}:{label}"``, an item with the label it asks about.

Read by the mapping (:mod:`plugin.mapping.choices`), by rows held as codes (:mod:`plugin.mapping.coded`) and by the
scores; a module of its own, so that none of them needs another for it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["split_item_names"]


def split_item_names(names: Sequence[str], labels: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
    """The item and the label of each yes/no item name ``"{item}:{label}"``, as object arrays.

    Items may hold colons themselves (per-region items are ``"{task}:{region}"``) and so may labels, so a known
    label is matched as the name's suffix, the longest first; without the config's labels, or when no label
    holds a colon, the text after the last colon is the label (one pass over the names).

    >>> items, labels = split_item_names(["7:r1:Yes: sure", "7:r1:No", "8"], ["Yes: sure", "No"])
    >>> items.tolist(), labels.tolist()
    (['7:r1', '7:r1', '8'], ['Yes: sure', 'No', '8'])
    """
    if not any(":" in label for label in labels or ()):
        parts = [name.rpartition(":") for name in names]
        return (np.array([head if colon else tail for head, colon, tail in parts], dtype=object),
                np.array([tail for _, _, tail in parts], dtype=object))
    text = pd.Series(list(names), dtype=object)
    found = pd.Series(np.full(len(text), None, dtype=object), index=text.index)
    base = pd.Series(np.full(len(text), None, dtype=object), index=text.index)
    for label in sorted(labels or (), key=len):  # a longer label that also matches wins
        mask = text.str.endswith(f":{label}")
        if mask.any():
            found[mask] = label
            base[mask] = text[mask].str.slice(stop=-(len(label) + 1))
    unknown = found.isna()
    if unknown.any():
        parts = text[unknown].str.rsplit(":", n=1)
        found[unknown] = parts.str[-1]
        base[unknown] = parts.str[0]
    return base.to_numpy(dtype=object), found.to_numpy(dtype=object)
