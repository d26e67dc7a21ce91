"""The kappa family per control and label (Di Eugenio & Glass 2004, section 5; Klemens 2012, R_i) against the papers,
brute force, scikit-learn, and properties."""

import warnings
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from agreement import annotator_labels, fleiss_kappa, information_agreement_many, krippendorff_alpha, label_counts, spa
from agreement.family import ALL_LABELS, agreement_family, one_against_rest
from tests.profiles import examples


def _rows(pairs):
    """Two coders, one item per (first, second) label pair."""
    return pd.DataFrame({"item": np.repeat(np.arange(len(pairs)), 2), "annotator": ["A", "B"] * len(pairs),
                         "label": [label for pair in pairs for label in pair]})


def _family(rows, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return agreement_family(annotator_labels(rows), label_counts(rows), **options).set_index("label")


def test_di_eugenio_glass_example_1_reports_the_three_kappas_together():
    # Di Eugenio & Glass 2004, Figure 2 (Accept/Ack, 150 items): kappa_Co 0.672489 (printed 0.6724), kappa_S&C 0.6633,
    # 2P(A) - 1 = 0.6666. With two coders, kappa_S&C is Fleiss' kappa.
    rows = _rows([("acc", "acc")] * 70 + [("acc", "ack")] * 25 + [("ack", "ack")] * 55)
    whole = _family(rows).loc[ALL_LABELS]
    assert whole["kappa_co"] == pytest.approx(0.672489, abs=1e-6)
    assert whole["kappa_sc"] == pytest.approx((125 / 150 - 0.505) / 0.495)
    assert whole["pabak"] == pytest.approx(2 * 125 / 150 - 1)
    assert whole["n_items"] == 150


def test_di_eugenio_glass_example_3_low_kappa_beside_high_pabak_is_prevalence():
    # Di Eugenio & Glass 2004, Figure 3: 90 agreed "acc", 5 + 5 split, 0 agreed "ack": kappa_Co = -0.052632 (printed
    # -0.048, derived value kept) while PABAK = 0.8: the table says prevalence, not disagreement.
    rows = _rows([("acc", "acc")] * 90 + [("acc", "ack")] * 5 + [("ack", "acc")] * 5)
    whole = _family(rows).loc[ALL_LABELS]
    assert whole["kappa_co"] == pytest.approx(-0.005 / 0.095)
    assert whole["pabak"] == pytest.approx(0.8)


def test_one_against_rest_collapses_each_label():
    table = np.array([[[3.0, 1.0, 0.0], [0.0, 2.0, 1.0], [2.0, 0.0, 4.0]]])
    binary = one_against_rest(table)
    assert binary.shape == (3, 1, 2, 2)
    # label 0: both 3; first only 1 + 0; second only 0 + 2; neither 2 + 1 + 0 + 4
    assert binary[0, 0].tolist() == [[3.0, 1.0], [2.0, 7.0]]
    assert (binary.sum(axis=(2, 3)) == table.sum()).all()


def _random_rows(seed, n_items=60, annotators=("a", "b", "c", "d"), labels=("x", "y", "z")):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(labels), n_items)
    records = []
    for item in range(n_items):
        for who in annotators:
            if rng.random() < 0.7:
                label = truth[item] if rng.random() < 0.7 else rng.integers(0, len(labels))
                records.append((item, who, labels[label]))
    return pd.DataFrame(records, columns=["item", "annotator", "label"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_label_row_equals_brute_force_over_pairs_and_scikit_learn(seed):
    rows = _random_rows(seed)
    family = _family(rows)
    wide = rows.pivot(index="item", columns="annotator", values="label")
    for label in ("x", "y", "z"):
        kappas, weights, agree, total, tables = [], [], 0, 0, []
        for a, b in combinations(wide.columns, 2):
            both = wide[[a, b]].dropna()
            first, second = both[a] == label, both[b] == label
            kappas.append(cohen_kappa_score(first, second))
            weights.append(len(both))
            agree += int((first == second).sum())
            total += len(both)
            tables.append(pd.crosstab(first, second).reindex(index=[True, False], columns=[True, False],
                                                             fill_value=0).to_numpy(float))
        row = family.loc[label]
        assert row["kappa_co"] == pytest.approx(np.average(kappas, weights=weights))
        assert row["pabak"] == pytest.approx(2 * agree / total - 1)
        assert row["p_i"] == pytest.approx(information_agreement_many(tables))
        yes_no = pd.crosstab(rows["item"], rows["label"] == label).reindex(columns=[True, False], fill_value=0)
        assert row["kappa_sc"] == pytest.approx(fleiss_kappa(yes_no.to_numpy(float)))
        assert row["alpha"] == pytest.approx(krippendorff_alpha(yes_no.to_numpy(float)))
        assert row["spa"] == pytest.approx(spa(yes_no.to_numpy(float)))


def test_r_i_is_klemens_ratio_on_the_pooled_symmetric_table():
    rows = _random_rows(5)
    family = _family(rows)
    wide = rows.pivot(index="item", columns="annotator", values="label")
    labels = ["x", "y", "z"]
    pooled = np.zeros((3, 3))
    for a, b in combinations(wide.columns, 2):
        both = wide[[a, b]].dropna()
        for first, second in zip(both[a], both[b], strict=True):
            pooled[labels.index(first), labels.index(second)] += 1
            pooled[labels.index(second), labels.index(first)] += 1
    joint = pooled / pooled.sum()
    for i, label in enumerate(labels):
        assert family.loc[label, "r_i"] == pytest.approx(joint[i, i] / (joint[i].sum() * joint[:, i].sum()))
    assert np.isnan(family.loc[ALL_LABELS, "r_i"])


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(0, 10_000), st.permutations(["a", "b", "c", "d"]))
def test_renaming_annotators_changes_nothing(seed, names):
    rows = _random_rows(seed, n_items=20)
    renamed = rows.assign(annotator=rows["annotator"].map(dict(zip(["a", "b", "c", "d"], names, strict=True))))
    pd.testing.assert_frame_equal(_family(rows), _family(renamed))


def test_perfect_agreement_gives_one_everywhere_it_is_defined():
    rows = _rows([("x", "x")] * 5 + [("y", "y")] * 7 + [("z", "z")] * 3)
    family = _family(rows)
    for column in ("kappa_co", "kappa_sc", "pabak", "p_i", "alpha", "spa"):
        assert family[column].to_numpy() == pytest.approx(1.0), column


def test_counts_over_other_categories_are_refused():
    rows = _rows([("x", "y")])
    with pytest.raises(ValueError, match="same categories"):
        agreement_family(annotator_labels(rows), np.ones((1, 3)))
