"""``--shard K/N`` and ``--shard auto``: a StatefulSet pod's shard from its index label or its name."""

import pytest

from plugin.cli import _shard, main
from plugin.service.settings import ServiceSettings
from plugin.settings import SettingsError

POD_VARIABLES = ("AGREEMENT_SHARDS", "AGREEMENT_POD_INDEX", "POD_NAME", "HOSTNAME")


@pytest.fixture
def pod(monkeypatch):
    """A pod's environment, nothing of this machine's (its HOSTNAME above all)."""
    for name in POD_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    def set_env(**env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)

    return set_env


def test_k_of_n_and_none():
    assert _shard("2/3") == (2, 3)
    assert _shard(" 1/1 ") == (1, 1)
    assert _shard(None) is None and _shard("") is None and _shard("  ") is None


@pytest.mark.parametrize(("env", "expected"), [
    # Kubernetes 1.28+: the apps.kubernetes.io/pod-index label, through the downward API
    ({"AGREEMENT_SHARDS": "3", "AGREEMENT_POD_INDEX": "0"}, (1, 3)),
    ({"AGREEMENT_SHARDS": "3", "AGREEMENT_POD_INDEX": "2"}, (3, 3)),
    # the label wins over the name
    ({"AGREEMENT_SHARDS": "3", "AGREEMENT_POD_INDEX": "1", "POD_NAME": "agreement-2"}, (2, 3)),
    # before 1.28 the label is missing and the downward API gives an empty value: the pod's name
    ({"AGREEMENT_SHARDS": "3", "AGREEMENT_POD_INDEX": "", "POD_NAME": "agreement-2"}, (3, 3)),
    ({"AGREEMENT_SHARDS": "2", "POD_NAME": "label-studio-agreement-0"}, (1, 2)),
    # no POD_NAME: the hostname, which is the pod's name in a pod
    ({"AGREEMENT_SHARDS": "4", "HOSTNAME": "agreement-3"}, (4, 4)),
    # POD_NAME wins over HOSTNAME
    ({"AGREEMENT_SHARDS": "4", "POD_NAME": "agreement-1", "HOSTNAME": "agreement-3"}, (2, 4)),
    # an ordinal of several digits, and a single replica
    ({"AGREEMENT_SHARDS": "12", "POD_NAME": "agreement-11"}, (12, 12)),
    ({"AGREEMENT_SHARDS": "1", "POD_NAME": "agreement-0"}, (1, 1)),
])
def test_auto_from_the_pod(pod, env, expected):
    pod(**env)
    assert _shard("auto") == expected
    assert _shard(" AUTO ") == expected


@pytest.mark.parametrize(("env", "message"), [
    ({"POD_NAME": "agreement-0"}, "AGREEMENT_SHARDS (the StatefulSet's replicas), a whole number of 1 or more; got ''"),
    ({"AGREEMENT_SHARDS": "0", "POD_NAME": "agreement-0"}, "got '0'"),
    ({"AGREEMENT_SHARDS": "three", "POD_NAME": "agreement-0"}, "got 'three'"),
    ({"AGREEMENT_SHARDS": "3", "AGREEMENT_POD_INDEX": "x"}, "AGREEMENT_POD_INDEX is the pod's index, a whole number; "
                                                            "got 'x'"),
    ({"AGREEMENT_SHARDS": "3"}, "needs the pod's index: AGREEMENT_POD_INDEX"),
    ({"AGREEMENT_SHARDS": "3", "HOSTNAME": "laptop"}, "got HOSTNAME='laptop'"),
    ({"AGREEMENT_SHARDS": "3", "POD_NAME": "agreement-7f9c8-x2x"}, "got POD_NAME='agreement-7f9c8-x2x'"),
    ({"AGREEMENT_SHARDS": "3", "POD_NAME": "agreement-3"}, "POD_NAME=agreement-3 is shard 4, past AGREEMENT_SHARDS=3"),
    ({"AGREEMENT_SHARDS": "2", "AGREEMENT_POD_INDEX": "2"}, "AGREEMENT_POD_INDEX=2 is shard 3, past "
                                                            "AGREEMENT_SHARDS=2"),
])
def test_auto_refuses_what_it_cannot_resolve(pod, env, message):
    pod(**env)
    with pytest.raises(SettingsError) as raised:
        _shard("auto")
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_the_pods_of_a_statefulset_own_every_project_once(pod):
    owners = {}
    for index in range(3):
        pod(AGREEMENT_SHARDS="3", POD_NAME=f"agreement-{index}")
        settings = ServiceSettings(projects=(), all_projects=True, public_url="http://x", secret="", connection=None,
                                   shard=_shard("auto"))
        for project in range(1, 31):
            if settings.owns(project):
                owners.setdefault(project, []).append(index)
    assert owners == {project: [(project - 1) % 3] for project in range(1, 31)}


def test_serve_refuses_an_unresolved_auto_in_one_line(pod, capsys, monkeypatch):
    monkeypatch.setenv("AGREEMENT_WEBHOOK_SECRET", "a-Strong-secret-for-tests-9")
    monkeypatch.setenv("AGREEMENT_SHARD", "auto")  # the environment's form of --shard auto
    pod(AGREEMENT_SHARDS="2", POD_NAME="agreement-5")
    assert main(["serve", "--project", "all", "--url", "http://127.0.0.1:9", "--api-key", "k"]) == 2
    err = capsys.readouterr().err
    assert "POD_NAME=agreement-5 is shard 6, past AGREEMENT_SHARDS=2" in err and err.count("\n") == 1
