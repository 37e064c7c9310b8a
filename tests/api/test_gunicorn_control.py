"""gunicorn's control socket (gunicornc, gunicorn >= 25.1) stays off: its default path under $HOME cannot be made
under a read-only root file system (the Kubernetes pods'), which gunicorn logged as an error at every start."""

from __future__ import annotations

import time

from tests.stack import ApiProcess, stack_settings


def test_the_api_starts_without_a_control_socket_where_home_cannot_be_written(tmp_path, redis_server, model_dir):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")  # $HOME/.gunicorn cannot be made below a file: a read-only root's effect, even for root
    log = tmp_path / "api.log"
    api = ApiProcess(
        stack_settings(redis_server.url, model_dir),
        log,
        extra_env={"HOME": str(blocker / "home"), "XDG_RUNTIME_DIR": ""},
    ).start(workers=1)
    try:
        assert api.url
    finally:
        api.stop()
    text = log.read_text(errors="replace")
    assert "Booting worker" in text or "Listening at" in text, text[-2000:]
    assert "Control server" not in text and "gunicorn.ctl" not in text, text[-2000:]


def test_a_control_socket_is_there_when_asked_for(tmp_path, redis_server, model_dir):
    socket = tmp_path / "api.ctl"
    api = ApiProcess(
        stack_settings(redis_server.url, model_dir),
        tmp_path / "api.log",
        extra_env={"GUNICORN_CONTROL_SOCKET": str(socket)},
    ).start(workers=1)
    try:
        deadline = time.monotonic() + 30  # the arbiter makes it beside booting the workers
        while not socket.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert socket.exists()
    finally:
        api.stop()
