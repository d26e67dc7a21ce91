"""Per-project settings files: TOML and YAML alike, the top over the flags, a section over the top, one-line errors."""

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.project_settings import MAX_SETTINGS_BYTES, read_project_settings
from plugin.settings import ProjectOptions, ReviewOptions, ScoringOptions, SettingsError
from tests.profiles import examples

BASE = ProjectOptions(scoring=ScoringOptions(threshold=0.4, n_resamples=50), review=ReviewOptions(tab=False))
TOML = """threshold = 0.5
min_gt_accuracy = 0.7

[projects.3]
threshold = 0.6
control_thresholds = { sentiment = 0.75 }
escalate = true
span_alignment = "overlap"
consensus_prior = [0, 0]
"""
YAML = """threshold: 0.5
min_gt_accuracy: 0.7
projects:
  3: {threshold: 0.6, control_thresholds: {sentiment: 0.75}, escalate: true, span_alignment: overlap,
      consensus_prior: [0, 0]}
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_toml_and_yaml_say_the_same_and_sections_win_over_the_top_over_the_flags(tmp_path):
    toml = read_project_settings(write(tmp_path, "s.toml", TOML), base=BASE)
    assert toml == read_project_settings(write(tmp_path, "s.yaml", YAML), base=BASE)
    other = toml.for_project(5)
    assert (other.scoring.threshold, other.scoring.min_gt_accuracy) == (0.5, 0.7)
    assert other.scoring.n_resamples == 50 and other.review.tab is False  # what the file does not set: the flags
    three = toml.for_project(3)
    assert (three.scoring.threshold, dict(three.scoring.thresholds), three.scoring.min_gt_accuracy) == (
        0.6, {"sentiment": 0.75}, 0.7)
    assert three.review.escalate is True and three.mapping.span_alignment == "overlap"
    assert three.scoring.consensus_prior == (0.0, 0.0) and other.scoring.consensus_prior == (2.0, 1.0)
    assert toml.for_project(None) == other


@pytest.mark.parametrize(("name", "text", "message"), [
    ("s.toml", "treshold = 0.5\n", "at the top: unknown setting 'treshold'"),
    ("s.toml", 'threshold = "high"\n', "threshold must be a number; got 'high'"),
    ("s.toml", "[projects.3]\nthreshold = true\n", "project 3: threshold must be a number"),
    ("s.toml", "[projects.3]\nthreshold = 1.5\n", "project 3: The threshold (--threshold) must lie between 0 and 1"),
    ("s.toml", "[projects.x]\nthreshold = 0.5\n", "named by a positive whole number; got 'x'"),
    ("s.toml", "[projects]\n3 = 0.5\n", "project 3 must be a table of settings"),
    ("s.toml", "threshold = \n", "is not valid TOML"),
    ("s.yaml", "threshold: [unclosed\n", "is not valid YAML"),
    ("s.yaml", "- 1\n- 2\n", "must hold a table of settings at its top"),
    ("s.yaml", "control_thresholds: {sentiment: yes}\n", "a table of control names to numbers"),
    ("s.yaml", "max_overlap: 2.5\n", "max_overlap must be a whole number"),
    ("s.toml", "consensus_prior = 2\n", "consensus_prior must be two numbers, as [2, 1]; got 2"),
    ("s.toml", "consensus_prior = [2, -1]\n", "The consensus prior (--consensus-prior) must be two finite"),
    ("s.json", "{}", "must end in .toml, .yaml or .yml"),
])
def test_bad_files_are_refused_in_one_line_naming_the_place(tmp_path, name, text, message):
    with pytest.raises(SettingsError) as raised:
        read_project_settings(write(tmp_path, name, text), base=BASE)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_a_missing_or_huge_file_is_refused(tmp_path):
    with pytest.raises(SettingsError, match="cannot be read"):
        read_project_settings(tmp_path / "absent.toml", base=BASE)
    with pytest.raises(SettingsError, match="larger than"):
        read_project_settings(write(tmp_path, "big.toml", "#" * (MAX_SETTINGS_BYTES + 1)), base=BASE)


@settings(max_examples=examples(40), deadline=None)
@given(top=st.floats(0, 1), sections=st.dictionaries(st.integers(1, 10**6), st.floats(0, 1), max_size=5))
def test_any_valid_thresholds_read_back_alike_from_toml_and_yaml(tmp_path_factory, top, sections):
    directory = tmp_path_factory.mktemp("settings")
    toml = f"threshold = {top!r}\n" + "".join(f"[projects.{p}]\nthreshold = {v!r}\n" for p, v in sections.items())
    yaml_text = yaml.safe_dump({"threshold": top, "projects": {p: {"threshold": v} for p, v in sections.items()}})
    from_toml = read_project_settings(write(directory, "s.toml", toml), base=BASE)
    assert from_toml == read_project_settings(write(directory, "s.yaml", yaml_text), base=BASE)
    assert from_toml.defaults.scoring.threshold == top
    assert {p: from_toml.for_project(p).scoring.threshold for p in sections} == sections
