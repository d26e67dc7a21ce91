"""``compute`` as agreement.cli runs it, without the plugin's entry point: values by hand, and bad input."""

import argparse
import io
import json

import pytest

from agreement.cli import ComputeOptions, InputError, add_compute_parser, read_annotations, run_compute

# Two annotators on three items: (x, x), (x, y), (y, y); one row without a label is skipped.
# Contingency table a\b: x->x 1, x->y 1, y->y 1. P(A) = 2/3; a's marginals (2/3, 1/3), b's (1/3, 2/3):
# P(E) = 2/9 + 2/9 = 4/9, Cohen's kappa = (2/3 - 4/9) / (1 - 4/9) = (2/9) / (5/9) = 0.4.
CSV = "item,annotator,label\n1,a,x\n1,b,x\n2,a,x\n2,b,y\n3,a,y\n3,b,y\n4,a,\n"


def run(path, metric, **options):
    out, err = io.StringIO(), io.StringIO()
    status = run_compute(ComputeOptions(path=path, metric=metric, **options), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def two_annotators(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(CSV)
    return path


def test_cohen_kappa_by_hand_as_json(two_annotators):
    status, out, _ = run(two_annotators, "cohen", as_json=True)
    result = json.loads(out)
    assert status == 0
    assert result["value"] == pytest.approx(0.4)
    assert result["observed"] == pytest.approx(2 / 3)
    assert (result["n_items"], result["n_annotations"], result["n_annotators"], result["skipped_rows"]) == (3, 6, 2, 1)
    assert result["n_common_items"] == 3 and result["warnings"] == []


def test_the_text_line_names_the_measure_and_its_data(two_annotators):
    status, out, _ = run(two_annotators, "cohen")
    assert (status, out) == (0, "cohen = 0.400 over 3 items and 6 annotations\n")  # 3 decimals, as the report


def test_an_undefined_measure_prints_null_and_why(tmp_path):
    # every label "x": P(E) = 1, kappa undefined
    path = tmp_path / "same.csv"
    path.write_text("item,annotator,label\n1,a,x\n1,b,x\n2,a,x\n2,b,x\n")
    status, out, err = run(path, "cohen", as_json=True)
    assert status == 0 and json.loads(out)["value"] is None
    assert err.startswith("ls-agreement compute: warning: Cohen's kappa is undefined")


def test_bad_input_is_one_input_error(tmp_path, two_annotators):
    with pytest.raises(InputError, match="does not exist"):
        read_annotations(tmp_path / "none.csv", columns=("item", "annotator", "label"))
    with pytest.raises(InputError, match="has no column 'rank'; its columns are: item, annotator, label"):
        read_annotations(two_annotators, columns=("item", "annotator", "label", "rank"))
    three = tmp_path / "three.csv"
    three.write_text(CSV + "1,c,x\n")
    with pytest.raises(InputError, match=r"compares exactly two annotators; .* has 3 \(a, b, c\)"):
        run(three, "cohen")


def test_options_are_checked_when_read_and_errors_exit_with_status_2(two_annotators):
    parser = argparse.ArgumentParser()
    add_compute_parser(parser.add_subparsers())
    args = parser.parse_args(["compute", str(two_annotators), "--metric", "augmented", "--p", "0.3"])
    with pytest.raises(InputError, match="--p must lie between 0.5 and 1"):
        ComputeOptions.from_namespace(args)
    out, err = io.StringIO(), io.StringIO()
    assert args.handler(args, out, err) == 2
    assert err.getvalue().startswith("ls-agreement compute: error: --p must lie between 0.5 and 1")
    args = parser.parse_args(["compute", str(two_annotators), "--metric", "cohen", "--json"])
    assert args.handler(args, out, err) == 0 and json.loads(out.getvalue())["value"] == pytest.approx(0.4)
