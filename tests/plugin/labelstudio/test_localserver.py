"""A throwaway Label Studio (the benchmarks'): stopped, and its folder removed, however the run ends."""

import pytest

from plugin.labelstudio import localserver


class _Server:
    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.stopped = 0

    def stop(self):
        self.stopped += 1


@pytest.mark.parametrize("production", [False, True])
def test_a_throwaway_server_is_stopped_and_its_folder_removed_when_the_run_fails(monkeypatch, production):
    started = []

    def fake_start(data_dir, *, command=None):
        data_dir.mkdir(parents=True)
        (data_dir / "label-studio.log").write_text("up")
        started.append((_Server(data_dir), command))
        return started[-1][0]

    monkeypatch.setattr(localserver, "start_production" if production else "start", fake_start)
    with pytest.raises(RuntimeError, match="the run failed"), \
            localserver.throwaway("ls-test-", production=production, command="/opt/ls/bin/label-studio") as server:
        assert server.data_dir.name == "server" and server.data_dir.parent.name.startswith("ls-test-")
        assert (server.data_dir / "label-studio.log").exists()
        raise RuntimeError("the run failed")
    (server, command), = started
    assert server.stopped == 1 and command == "/opt/ls/bin/label-studio"
    assert not server.data_dir.parent.exists()
