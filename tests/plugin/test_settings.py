"""Settings check themselves when built: the CLI and scripts that build them directly get the same one-line errors."""

import pytest

from plugin.demo import DemoSettings
from plugin.service.app import ServiceSettings
from plugin.settings import Connection, ScoringOptions, SettingsError


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan")])
def test_a_threshold_outside_0_1_is_refused(threshold):
    with pytest.raises(SettingsError, match=r"^The threshold \(--threshold\) must lie between 0 and 1"):
        ScoringOptions(threshold=threshold)


def test_a_control_threshold_outside_0_1_is_refused_naming_the_control():
    with pytest.raises(SettingsError, match="control 'quality'"):
        ScoringOptions(thresholds={"sentiment": 0.7, "quality": 1.2})
    assert ScoringOptions(threshold=0.0, thresholds={"quality": 1.0}).thresholds == {"quality": 1.0}


@pytest.mark.parametrize("change", [{"reconcile_interval": 0}, {"unhealthy_after": -1}, {"full_pass_every": 0},
                                    {"read_rate": -5.0}])
def test_service_settings_refuse_what_cannot_run(change):
    with pytest.raises(SettingsError, match="--reconcile-interval"):
        ServiceSettings(projects=(1,), public_url="http://x", secret="s", connection=Connection(url="http://l",
                                                                                               api_key="k"), **change)


@pytest.mark.parametrize("change", [{"tasks": 0}, {"annotators": 6}, {"reconcile_interval": 0.5}])
def test_demo_settings_refuse_what_the_demo_cannot_simulate(change, tmp_path):
    with pytest.raises(SettingsError, match="--annotators between 2 and 5"):
        DemoSettings(data_dir=tmp_path, **change)


def test_the_cli_reports_a_settings_error_in_one_line(capsys, tmp_path):
    from plugin.cli import main

    export = tmp_path / "export.json"
    export.write_text("[]")
    assert main(["sync", "--export", str(export), "--threshold", "2"]) == 2
    err = capsys.readouterr().err
    assert err == "ls-agreement sync: error: The threshold (--threshold) must lie between 0 and 1; got 2.0.\n"


@pytest.mark.parametrize(("change", "message"), [
    ({"span_flag_on": "kappa"}, r"^The span flag \(--span-flag-on\) must be one of f1-overlap, f1, items, gamma"),
    ({"gamma_alpha": -1.0}, r"^Gamma's alpha weight \(--gamma-alpha\)"),
    ({"gamma_beta": float("nan")}, r"^Gamma's beta weight \(--gamma-beta\)"),
    ({"gamma_alpha": 0.0, "gamma_beta": 0.0}, r"^Gamma needs a positional or a categorical weight"),
    ({"gamma_empty": 0.0}, r"^Gamma's cost of an unaligned unit \(--gamma-empty\)"),
    ({"gamma_samples": 1}, r"^Gamma's sampled corpora \(--gamma-samples\)"),
])
def test_span_settings_refuse_what_cannot_be_scored(change, message):
    with pytest.raises(SettingsError, match=message):
        ScoringOptions(**change)
    assert ScoringOptions().span_flag_on == "f1-overlap"
