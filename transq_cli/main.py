"""`transq`: run the service locally, build a test model, translate files."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from transq_cli import memories

log = logging.getLogger("transq")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="transq", description="Queue-based machine translation.")
    commands = parser.add_subparsers(dest="command", required=True)

    dev = commands.add_parser("dev", help="run Redis, the API, one worker and the document stage in the foreground")
    dev.add_argument("--port", type=int, default=8080)
    dev.add_argument(
        "--model",
        action="append",
        help="hub id or local folder (default: TRANSQ_MODEL or opus-mt-zh-en); repeat it to serve several "
        "language pairs, one worker each",
    )
    dev.add_argument("--redis-port", type=int, default=0, help="port of the Redis it starts (default: a free one)")
    dev.add_argument(
        "--test-model",
        action="store_true",
        help="serve the offline test model (it copies its input; it ships with transq), no hub needed",
    )

    make = commands.add_parser(
        "make-test-model", help="write the offline test model (it copies its input) or a random opus-shaped one"
    )
    make.add_argument("folder")
    make.add_argument("--shape", choices=["tiny", "opus"], default="tiny")
    make.add_argument("--pair", choices=["zh-en", "en-zh"], default="zh-en", help="the language pair it translates")
    make.add_argument(
        "--build", action="store_true", help="construct the copy model again (seconds), not copy the shipped one"
    )

    translate = commands.add_parser("translate", help="translate a file through the HTTP API")
    translate.add_argument(
        "file",
        nargs="?",
        help="a UTF-8 text file (- for standard input; paragraphs are kept), or a .md, .html, .srt, .docx, "
        ".xlsx, .pptx, .odt, .po, .xlf or .epub document (it comes back in the same format, its markup untouched)",
    )
    translate.add_argument("-o", "--output", help="write here (default: standard output)")
    translate.add_argument("--resume", metavar="JOB_ID", help="poll a job submitted earlier instead of submitting")
    translate.add_argument(
        "--from",
        dest="source",
        help="source language, e.g. zh, or auto (detected); by default detected when several pairs are served",
    )
    translate.add_argument("--to", dest="target", help="target language, e.g. en")
    translate.add_argument(
        "--glossary",
        metavar="FILE",
        help="terms to translate as given: a JSON object, or `source = target` lines "
        "(a term alone on its line is kept as written; # starts a comment)",
    )
    translate.add_argument("--glossary-id", metavar="ID", help="a stored glossary (POST /v1/glossaries)")
    translate.add_argument(
        "--stream",
        action="store_true",
        help="print each sentence to standard error as it is translated (GET /v1/jobs/<id>/events), not a progress bar",
    )
    translate.add_argument(
        "--memory", metavar="ID", action="append", help="a translation memory (transq memory import)"
    )
    _client_options(translate)

    detect = commands.add_parser("detect", help="print each file's language and confidence (POST /v1/detect)")
    detect.add_argument("files", nargs="*", help="UTF-8 text files (- or none: standard input)")
    _client_options(detect)

    status = commands.add_parser("status", help="show a job")
    status.add_argument("job_id")
    _client_options(status)

    memories.add_commands(commands, _client_options)

    commands.add_parser("settings", help="print every TRANSQ_* setting as a Markdown table")
    key_id = commands.add_parser(
        "key-id", help="print an API key's id (for TRANSQ_QUOTA_OVERRIDES), from the TRANSQ_* settings' broker"
    )
    key_id.add_argument("key", help="the API key (- : read it from standard input)")

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("urllib3").setLevel(logging.ERROR)
    if args.command == "make-test-model":
        # In its own process: the CLI never imports the worker (nor torch).
        command = [
            sys.executable,
            "-m",
            "worker.translation.model.offline_model",
            args.folder,
            "--shape",
            args.shape,
            "--pair",
            args.pair,
            *(["--build"] if args.build else []),
        ]
        return subprocess.run(command, check=False).returncode
    if args.command == "key-id":
        from shared.settings import Settings
        from shared.store.backends import Backends
        from shared.store.key_ids import KeyIds

        settings = Settings.from_env()
        backends = Backends.connect(settings)
        key = sys.stdin.readline().strip() if args.key == "-" else args.key
        sys.stdout.write(KeyIds(backends.redis, backends.keys, settings.key_id_secret).of(key) + "\n")
        return 0
    if args.command == "settings":
        from shared.settings import Settings
        from shared.settings.environment import settings_table

        sys.stdout.write(settings_table(Settings) + "\n")
        return 0
    if args.command == "dev":
        return run_dev(args.port, args.model, args.redis_port, args.test_model)
    if args.command == "memory":
        return memories.run(args)
    if args.command == "detect":
        from transq_cli.detect_files import detect_files

        return detect_files(args)
    from transq_cli.translate_file import show_status, translate_file

    if args.command == "status":
        return show_status(args)
    return translate_file(args)


def _client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=os.environ.get("TRANSQ_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--api-key", default=os.environ.get("TRANSQ_API_KEY"))


def model_problem(model: str) -> str | None:
    """Why `model` cannot be loaded here, in one line, or None."""
    if Path(model).is_dir():
        return None if (Path(model) / "config.json").exists() else f"{model} has no config.json"
    if model.startswith(("/", ".", "~")) or Path(model.split("/")[0]).is_dir():  # a path, not a hub id
        return f"the folder {model} does not exist"
    try:
        from huggingface_hub import model_info, snapshot_download

        try:
            snapshot_download(model, local_files_only=True)
            return None
        except Exception:  # noqa: BLE001 - not cached: try the hub
            model_info(model, timeout=5)
            return None
    except Exception as exc:  # noqa: BLE001
        return (
            f"cannot reach the Hugging Face hub for {model} ({type(exc).__name__}); "
            f"use --model DIR, for example after `transq make-test-model /tmp/m`"
        )


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_model_folder() -> Path:
    """The offline test model (zh-en, it copies its input): the files that ship with transq, found without
    importing the worker (the CLI never imports it, nor torch)."""
    spec = importlib.util.find_spec("worker.translation.model")  # imports worker/__init__.py only: no torch
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the worker package is not installed: pip install -e '.[worker]'")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "copy-model"


def run_dev(port: int, models: list[str] | None, redis_port: int, test_model: bool = False) -> int:
    """Redis + API (gunicorn) + one worker per model + the document stage (+ the callback deliverer when
    TRANSQ_CALLBACK_SECRET is set), until Ctrl-C."""
    from devstack.callback_deliverer import CallbackDelivererProcess
    from devstack.processes import ApiProcess, DocumentStageProcess, WorkerProcess
    from devstack.redis_server import RedisServer
    from shared.settings import Settings

    settings = Settings.from_env()
    if not _port_free(port):
        log.error("transq dev: port %d is in use; use --port N", port)
        return 2
    if test_model:
        models = [str(test_model_folder())]
    elif not models and "TRANSQ_MODEL" not in os.environ and model_problem(settings.model):
        # Nothing was asked for and the default model cannot be had: a newcomer still gets a running service.
        log.warning(
            "transq dev: %s is not reachable; serving the offline test model (it copies its input)", settings.model
        )
        models = [str(test_model_folder())]
    models = models or [settings.model]
    for model in models:
        problem = model_problem(model)
        if problem:
            log.error("transq dev: %s", problem)
            return 2
    server = RedisServer(port=redis_port or None).start()
    settings = dataclasses.replace(settings, redis_url=server.url, cache_url=server.url, model=models[0])
    log.info("transq dev: Redis on %s, API on http://127.0.0.1:%d, models %s", server.url, port, ", ".join(models))
    api = ApiProcess(settings, port=port)
    workers = [
        WorkerProcess(dataclasses.replace(settings, model=model), name=f"w{i + 1}", quiet=True)
        for i, model in enumerate(models)
    ]
    workers.append(DocumentStageProcess(settings, name="documents", quiet=True))  # parses and renders documents
    # Completion callbacks, when a secret is set: their deliverer, logging beside Redis's files.
    deliverer = (
        CallbackDelivererProcess(settings, Path(server.directory) / "callbacks.log")
        if settings.callback_secret
        else None
    )
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    def running() -> bool:
        return api.process.poll() is None and all(w.process.poll() is None for w in workers)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        api.start()
        for worker in workers:
            worker.start(wait_ready=False)
        if deliverer is not None:
            deliverer.start()
        announced = False
        while not stopping and running():
            if not announced and all(w.is_ready() for w in workers):
                print(f"ready: http://127.0.0.1:{port}/ (Ctrl-C stops)", flush=True)
                announced = True
            time.sleep(0.2)
    except (RuntimeError, TimeoutError) as exc:
        log.error("transq dev: %s", str(exc).splitlines()[0])
        return 1
    finally:
        if deliverer is not None:
            deliverer.stop()
        for worker in workers:
            worker.stop()
        api.stop()
        server.stop()
        log.info("transq dev: stopped")
    return 0 if stopping else 1


if __name__ == "__main__":
    sys.exit(main())
