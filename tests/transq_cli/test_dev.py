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
    for name in ("config.json", "source.spm", "target.spm", "vocab.json", "tokenizer_config.json"):
        assert (tmp_path / "m" / name).exists()
    import json

    vocab = json.loads((tmp_path / "m" / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["<pad>"] == len(vocab) - 1  # the opus-mt layout: pad last
