"""``ls-agreement compute`` on the bundled examples and on bad input."""

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from plugin.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(capsys, *args):
    status = main(["compute", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_json(capsys, *args):
    status, out, err = run(capsys, *args, "--json")
    assert status == 0, err
    return json.loads(out)


def test_alpha_on_the_datasaur_spans(capsys):
    result = run_json(capsys, EXAMPLES / "datasaur_spans.csv", "--metric", "alpha")
    assert result["value"] == pytest.approx(0.56)
    assert (result["n_items"], result["n_annotations"], result["n_pairable_items"]) == (8, 14, 6)


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.743421), ("ordinal", 0.815388), ("interval", 0.849107),
                                                 ("ratio", 0.797403)])
def test_alpha_levels_on_krippendorff_2011(capsys, level, expected):
    result = run_json(capsys, EXAMPLES / "krippendorff_2011.csv", "--metric", "alpha", "--level", level)
    assert result["value"] == pytest.approx(expected, abs=1e-6)
    assert result["level"] == level


def test_spa_and_fleiss(capsys):
    spa = run_json(capsys, EXAMPLES / "krippendorff_2011.csv", "--metric", "spa", "--weights", "edges")
    assert spa["weights"] == "edges" and 0.7 < spa["value"] < 0.9
    fleiss = run_json(capsys, EXAMPLES / "okay_example1.csv", "--metric", "fleiss")
    assert fleiss["value"] == pytest.approx(0.6633, abs=1e-4)  # two coders: Fleiss = Scott = S&C (Di Eugenio & Glass)


def test_the_kappa_family_is_reported_together(capsys):
    result = run_json(capsys, EXAMPLES / "okay_example1.csv", "--metric", "cohen")
    assert result["value"] == pytest.approx(0.672489, abs=1e-6)
    assert result["scott"] == pytest.approx(0.6633, abs=1e-4)
    assert result["pabak"] == pytest.approx(2 / 3)
    assert result["n_common_items"] == 150
    assert run_json(capsys, EXAMPLES / "okay_example1.csv", "--metric", "pabak")["value"] == pytest.approx(2 / 3)


def test_information_in_agreement(capsys):
    result = run_json(capsys, EXAMPLES / "klemens_table1.csv", "--metric", "pi")
    assert result["value"] == pytest.approx(0.3794, abs=1e-4)
    assert result["information"] == pytest.approx(0.5692, abs=1e-4)


def test_augmented_kappa_with_its_sweep(capsys):
    result = run_json(capsys, EXAMPLES / "email_multilabel.csv", "--metric", "augmented", "--p", "1")
    assert result["value"] == pytest.approx((0.6 - 0.32) / 0.68)
    assert set(result["sweep"]) == {"1.0", "0.9", "0.8", "0.7", "0.6", "0.5"}
    assert result["item_classes"]["better at p=0.5"] == 2


def test_confidence_interval_is_seeded(capsys):
    args = (EXAMPLES / "okay_example1.csv", "--metric", "cohen", "--ci", "0.9", "--bootstrap", "300", "--seed", "5")
    first, second = run_json(capsys, *args), run_json(capsys, *args)
    assert first["ci"] == second["ci"]
    assert first["ci"]["low"] < first["value"] < first["ci"]["high"]
    assert first["ci"]["confidence"] == 0.9 and first["ci"]["seed"] == 5


def test_plain_output_is_one_line(capsys):
    status, out, _ = run(capsys, EXAMPLES / "datasaur_spans.csv", "--metric", "alpha")
    assert status == 0
    assert out == "alpha (nominal) = 0.560 over 8 items and 14 annotations\n"


def test_undefined_value_is_null_with_a_warning(tmp_path, capsys):
    path = tmp_path / "same.csv"
    path.write_text("item,annotator,label\n1,a,x\n1,b,x\n2,a,x\n2,b,x\n")
    status, out, err = run(capsys, path, "--metric", "alpha", "--json")
    assert status == 0
    assert json.loads(out)["value"] is None
    assert "expected disagreement is zero" in err


def test_rows_with_empty_cells_are_skipped_and_counted(tmp_path, capsys):
    path = tmp_path / "gaps.csv"
    path.write_text("item,annotator,label\n1,a,x\n1,b,x\n2,a,\n2,b,y\n,c,y\n")
    result = run_json(capsys, path, "--metric", "spa")
    assert result["skipped_rows"] == 2 and result["n_annotations"] == 3
    status, _, err = run(capsys, path, "--metric", "spa")  # said on the terminal too, not only in --json
    assert status == 0 and "skipped 2 rows without all of item, annotator, label" in err


BAD_INPUT = [
    ("missing.csv", None, ["--metric", "alpha"], "does not exist"),
    ("empty.csv", b"", ["--metric", "alpha"], "is empty"),
    ("binary.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["--metric", "alpha"], "binary data"),
    ("latin1.csv", "item,annotator,label\n1,a,caf\xe9\n".encode("latin-1"), ["--metric", "alpha"], "not UTF-8"),
    ("columns.csv", b"task,user,choice\n1,a,x\n", ["--metric", "alpha"], "no column 'item', 'annotator', 'label'"),
    ("words.csv", b"item,annotator,label\n1,a,good\n1,b,bad\n", ["--metric", "alpha", "--level", "interval"],
     "needs numeric labels"),
    ("three.csv", b"item,annotator,label\n1,a,x\n1,b,x\n1,c,y\n", ["--metric", "cohen"], "exactly two annotators"),
    ("p.csv", b"item,annotator,label,rank\n1,a,x,1\n1,b,x,1\n", ["--metric", "augmented", "--p", "0.3"],
     "between 0.5 and 1"),
    ("ci.csv", b"item,annotator,label\n1,a,x\n1,b,x\n", ["--metric", "alpha", "--ci", "95"], "strictly between 0 and 1"),
    ("rank.csv", b"item,annotator,label,rank\n1,a,x,7\n1,b,x,1\n", ["--metric", "augmented"], "rank must be 1"),
    ("twice.csv", b"item,annotator,label\n1,a,x\n1,a,y\n", ["--metric", "alpha"], "more than once"),
    ("ragged.csv", b'item,annotator,label\n1,a,"x\n', ["--metric", "alpha"], "not a valid CSV file"),
    # pandas took a first row one field too long as holding an index, and dropped three rows without a word
    ("extra_first.csv", b"item,annotator,label\n1,a,x,EXTRA\n1,b,x\n2,a,y\n2,b,y\n", ["--metric", "alpha"],
     "line 2 has 4 fields where the header has 3"),
    ("extra_later.csv", b"item,annotator,label\n1,a,x\n1,b,x,EXTRA\n", ["--metric", "alpha"],
     "line 3 has 4 fields where the header has 3"),
]


@pytest.mark.parametrize(("name", "content", "args", "message"), BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, name, content, args, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    status, out, err = run(capsys, path, *args)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and message in err, err
    assert "Traceback" not in err


def test_a_directory_is_not_a_file(tmp_path, capsys):
    status, _, err = run(capsys, tmp_path, "--metric", "alpha")
    assert status == 2 and "is a directory" in err


def test_usage_errors_are_one_line_too():
    process = subprocess.run([sys.executable, "-m", "plugin", "compute", "x.csv", "--metric", "median"],
                             capture_output=True, text=True, check=False)
    assert process.returncode == 2
    assert process.stderr.count("\n") == 1 and "invalid choice: 'median'" in process.stderr


def test_the_console_script_is_ls_agreement():
    try:
        scripts = metadata.distribution("label-studio-agreement").entry_points
    except metadata.PackageNotFoundError:
        pytest.skip("the distribution is not installed (make test installs it)")
    assert {ep.name: ep.value for ep in scripts}["ls-agreement"] == "plugin.cli:main"


def test_gwet_ac1_and_ac2_with_both_intervals(capsys):
    # Gwet (2014): AC1 = 0.77544 (SE 0.14295); AC2 with quadratic weights 0.914 (SE 0.10396).
    result = run_json(capsys, EXAMPLES / "krippendorff_2011.csv", "--metric", "gwet", "--ci", "0.95", "--seed", "1",
                      "--bootstrap", "300")
    assert (result["coefficient"], round(result["value"], 5), round(result["standard_error"], 5)) == (
        "AC1", 0.77544, 0.14295)
    assert result["ci"]["analytic"]["high"] == 1.0 and result["ci"]["low"] < result["value"] < 1.0
    assert result["warnings"] == []
    result = run_json(capsys, EXAMPLES / "krippendorff_2011.csv", "--metric", "gwet", "--level", "interval")
    assert (result["coefficient"], round(result["value"], 5)) == ("AC2", 0.914)


def test_weighted_cohen_kappa(capsys, tmp_path):
    path = tmp_path / "ratings.csv"
    table = [[4, 1, 0], [1, 2, 1], [0, 0, 1]]  # rows: first annotator's rating 1..3, columns: the second's
    rows, item = ["item,annotator,label"], 0
    for first, counts in enumerate(table, start=1):
        for second, count in enumerate(counts, start=1):
            for _ in range(count):
                rows += [f"i{item},a,{first}", f"i{item},b,{second}"]
                item += 1
    path.write_text("\n".join(rows) + "\n")
    # By hand (agreement.kappa.cohen_kappa's docstring): 1 - 0.075 / 0.265 with quadratic weights.
    result = run_json(capsys, path, "--metric", "cohen", "--kappa-weights", "quadratic")
    assert result["value"] == pytest.approx(1 - 0.075 / 0.265) and result["kappa_weights"] == "quadratic"
    status, _, err = run(capsys, path, "--metric", "alpha", "--kappa-weights", "linear")
    assert status == 2 and "applies to --metric cohen only" in err
    status, _, err = run(capsys, EXAMPLES / "okay_example1.csv", "--metric", "cohen", "--kappa-weights", "linear")
    assert status == 2 and "needs numeric labels" in err and len(err.strip().splitlines()) == 1


def test_the_command_says_its_version_and_each_metric_s_name(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    version = metadata.version("label-studio-agreement")
    assert stopped.value.code == 0 and capsys.readouterr().out == f"ls-agreement {version}\n"
    with pytest.raises(SystemExit):
        main(["compute", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "information: Klemens' P_I, the information in agreement, two annotators" in help_text
    assert "scott: Scott's pi, two annotators" in help_text
    assert "(--metric pi too: P_I, not Scott's pi, which is scott)" in help_text
    # "pi", the older name, is Klemens' P_I still, and says so in its result
    assert run_json(capsys, EXAMPLES / "klemens_table1.csv", "--metric", "pi")["metric"] == "information"


def test_a_weighted_kappa_says_it_is_weighted(tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    path.write_text("item,annotator,label\n" + "".join(f"{i},a,{i % 3}\n{i},b,{(i + (i % 4 == 0)) % 3}\n"
                                                        for i in range(12)))
    status, out, _ = run(capsys, path, "--metric", "cohen", "--kappa-weights", "quadratic")
    assert status == 0 and re.fullmatch(r"weighted kappa \(quadratic\) = \d\.\d{3} over 12 items and 24 annotations\n", out)


@pytest.mark.parametrize("metric", ["cohen", "alpha", "information"])
def test_an_undefined_measure_is_said_undefined_in_the_result_and_its_warning(tmp_path, capsys, metric):
    path = tmp_path / "one_label.csv"
    path.write_text("item,annotator,label\n1,a,x\n1,b,x\n2,a,x\n2,b,x\n")
    status, out, err = run(capsys, path, "--metric", metric)
    assert status == 0 and " = undefined over 2 items" in out
    assert "is undefined" in err and "NaN" not in err + out


def test_bootstrap_without_an_interval_and_semicolons_are_refused_with_a_hint(tmp_path, capsys):
    status, _, err = run(capsys, EXAMPLES / "okay_example1.csv", "--metric", "cohen", "--bootstrap", "200")
    assert status == 2 and err == ("ls-agreement compute: error: --bootstrap sets the resamples of the interval --ci "
                                   "asks for; give --ci too (e.g. --ci 0.95).\n")
    path = tmp_path / "semicolons.csv"
    path.write_text("item;annotator;label\n1;a;x\n1;b;x\n")
    status, _, err = run(capsys, path, "--metric", "alpha")
    assert status == 2 and "It looks separated by semicolons: save it with commas" in err and err.count("\n") == 1
