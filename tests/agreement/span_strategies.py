"""Hypothesis strategies for span projects (agreement.units.Units) and the transformations they must survive."""

from __future__ import annotations

import random as random_module
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from agreement.units import Units


@dataclass(frozen=True)
class SpanProject:
    """A drawn project; ``units`` is it, whole."""

    units: Units

    def copy_first_annotator(self) -> Units:
        """Every annotator marks exactly what annotator 0 marked, on the continua annotator 0 annotated."""
        u = self.units
        own = u.annotator == 0
        n_ann = len(u.annotators)
        doc = np.tile(u.doc[own], n_ann)
        return Units(doc, np.repeat(np.arange(n_ann), own.sum()), np.tile(u.label[own], n_ann),
                     np.tile(u.start[own], n_ann), np.tile(u.end[own], n_ann), u.docs, u.annotators, u.labels,
                     np.repeat(u.present[:, :1], n_ann, axis=1), u.lengths)


@st.composite
def span_projects(draw, *, max_docs=4, max_annotators=4, max_labels=3, max_units=30, max_length=60):
    """Projects of 1-4 continua, 2-4 annotators and up to 30 whole-number spans that may overlap and repeat."""
    n_docs = draw(st.integers(1, max_docs))
    n_ann = draw(st.integers(2, max_annotators))
    n_lab = draw(st.integers(1, max_labels))
    present = np.array(draw(st.lists(st.lists(st.booleans(), min_size=n_ann, max_size=n_ann),
                                     min_size=n_docs, max_size=n_docs)), dtype=bool).reshape(n_docs, n_ann)
    present[:, 0] = True  # annotator 0 annotated everything, so copies of it are on every continuum
    lengths = np.array(draw(st.lists(st.integers(2, max_length), min_size=n_docs, max_size=n_docs)), dtype=float)
    cells = np.argwhere(present)
    n = draw(st.integers(0, max_units))
    rows = draw(st.lists(st.tuples(st.integers(0, len(cells) - 1), st.integers(0, n_lab - 1),
                                   st.floats(0, 1), st.floats(0, 1)), min_size=n, max_size=n))
    doc, ann, lab, start, end = [], [], [], [], []
    for cell, label, x, y in rows:
        d, a = cells[cell]
        length = lengths[d]
        s = int(x * (length - 1))
        e = s + 1 + int(y * (length - 1 - s))
        doc.append(d), ann.append(a), lab.append(label), start.append(s), end.append(e)
    return SpanProject(Units(np.array(doc, dtype=np.intp), np.array(ann, dtype=np.intp), np.array(lab, dtype=np.intp),
                             np.array(start, dtype=float), np.array(end, dtype=float),
                             tuple(f"doc{i}" for i in range(n_docs)), tuple(f"ann{i}" for i in range(n_ann)),
                             tuple(f"L{i}" for i in range(n_lab)), present, lengths))


def permuted(units: Units, random: random_module.Random) -> Units:
    """The same project with the rows, the annotators', labels' and continua's codes in another order."""
    rows = np.array(random.sample(range(units.n_units), units.n_units), dtype=np.intp)
    ann = np.array(random.sample(range(len(units.annotators)), len(units.annotators)), dtype=np.intp)
    lab = np.array(random.sample(range(len(units.labels)), len(units.labels)), dtype=np.intp)
    doc = np.array(random.sample(range(len(units.docs)), len(units.docs)), dtype=np.intp)
    # new code of old code c is ann[c]; name lists reordered to match
    inv = np.argsort
    return Units(doc[units.doc[rows]], ann[units.annotator[rows]], lab[units.label[rows]], units.start[rows],
                 units.end[rows], tuple(units.docs[i] for i in inv(doc)), tuple(units.annotators[i] for i in inv(ann)),
                 tuple(units.labels[i] for i in inv(lab)), units.present[inv(doc)][:, inv(ann)],
                 units.lengths[inv(doc)])


def shifted(units: Units, shift: float) -> Units:
    """Every unit moved ``shift`` along its continuum, and every continuum ``shift`` longer."""
    return Units(units.doc, units.annotator, units.label, units.start + shift, units.end + shift, units.docs,
                 units.annotators, units.labels, units.present, units.lengths + shift)
