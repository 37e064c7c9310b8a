"""`transq dev` and `transq make-test-model` as a newcomer runs them."""

import os
import subprocess
import sys

from tests.stack import ROOT


def run(*args, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "transq_cli.main", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_dev_without_the_hub_says_so_in_one_line():
    result = run("dev", "--model", "Helsinki-NLP/opus-mt-zh-en", env={"HF_HUB_OFFLINE": "1"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Hugging Face hub" in lines[0] and "--model" in lines[0]


def test_make_test_model_builds_a_loadable_model(tmp_path):
    result = run("make-test-model", str(tmp_path / "m"))
    assert result.returncode == 0, result.stderr
    assert "Writing model shards" not in result.stderr  # no progress bar
    for name in ("config.json", "source.spm", "target.spm", "vocab.json", "tokenizer_config.json"):
        assert (tmp_path / "m" / name).exists()
    import json

    vocab = json.loads((tmp_path / "m" / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["<pad>"] == len(vocab) - 1  # the opus-mt layout: pad last


def test_dev_with_a_missing_model_folder_says_the_folder_does_not_exist(tmp_path):
    result = run("dev", "--model", str(tmp_path / "nowhere"), "--port", "0")
    assert result.returncode == 2
    assert result.stderr.strip() == f"transq dev: the folder {tmp_path / 'nowhere'} does not exist"


def test_dev_on_a_port_in_use_says_so_in_one_line_at_once():
    import socket
    import time

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        result = run("dev", "--port", str(port), env={"HF_HUB_OFFLINE": "1"})
        assert time.monotonic() - started < 10  # no wait for gunicorn to give up
    assert result.returncode == 2
    assert result.stderr.strip() == f"transq dev: port {port} is in use; use --port N"


def run_dev_until_ready(*args: str, env: dict | None = None, when_ready=None) -> tuple[str | None, str, int]:
    """`transq dev ARGS` on a free port until its ready line (then `when_ready()`), then Ctrl-C: (ready line,
    stderr, port)."""
    import signal

    from devstack.redis_server import free_port

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "transq_cli.main", "dev", *args, "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        # The services' own logs share the terminal; the line comes once the API and the worker are ready.
        before = []
        for line in process.stdout:
            if line.startswith("ready"):
                break
            before.append(line)
        ready = line if line.startswith("ready") else None
        if ready and when_ready:
            when_ready()
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    return ready, "".join(before) + stderr, port


def test_dev_prints_one_ready_line_and_leaves_no_redis_folder(model_dir, tmp_path):
    import time

    temporary = tmp_path / "tmp"  # its own temporary folder: other tests' Redis folders come and go in /tmp
    temporary.mkdir()
    used = []
    env = {**os.environ, "TMPDIR": str(temporary)}
    ready, _, port = run_dev_until_ready(
        "--model", str(model_dir), env=env, when_ready=lambda: used.extend(temporary.glob("transq-redis-*"))
    )
    assert used  # its Redis kept its data there while it ran
    assert ready == f"ready: http://127.0.0.1:{port}/ (Ctrl-C stops)\n"
    time.sleep(0.2)
    assert not list(temporary.glob("transq-redis-*"))


def test_translate_reads_standard_input(stack):
    result = subprocess.run(
        [sys.executable, "-m", "transq_cli.main", "translate", "-", "--url", stack.api.url],
        input="从标准输入读。\n\n第二段。",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n\n") == 1


def test_dev_without_the_hub_and_without_a_model_serves_the_test_model(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("TRANSQ_MODEL", None)
    ready, console, port = run_dev_until_ready(env=env)
    assert ready == f"ready: http://127.0.0.1:{port}/ (Ctrl-C stops)\n"
    assert "serving the offline test model (it copies its input)" in console.splitlines()[0]
    assert "worker/translation/model/data/copy-model" in console  # the shipped model: nothing built, nothing downloaded
    assert not (tmp_path / "transq").exists()
    # a clean console: the services' log lines, without Celery's banner or its warning about running as root
    assert "[config]" not in console and ".> transport:" not in console, console
    assert "superuser privileges" not in console, console


def test_translate_refuses_a_file_the_api_does_not_translate_before_sending_it(tmp_path):
    """A .pdf (or bytes that are not UTF-8 text) is refused with exit 2, naming what transq translates; nothing
    is sent (the URL below has no server: a request would fail with exit 1 instead)."""
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
    (tmp_path / "data.bin").write_bytes(b"\x00\x01\x02\xff")
    (tmp_path / "plain.pdf.txt").write_text("可以翻译。", encoding="utf-8")
    for name, why in [("report.pdf", "does not translate .pdf files"), ("data.bin", "not UTF-8 text")]:
        result = run("translate", str(tmp_path / name), "--url", "http://127.0.0.1:9")
        assert result.returncode == 2, result.stderr
        assert why in result.stderr and ".docx" in result.stderr and "- for standard input" in result.stderr
    sent = run("translate", str(tmp_path / "plain.pdf.txt"), "--url", "http://127.0.0.1:9")
    assert sent.returncode == 1 and "does not translate" not in sent.stderr  # a text file is sent (no server)
