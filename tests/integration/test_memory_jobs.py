"""Translation memories end to end through a real stack (gunicorn, Redis, a Celery worker with the shipped copy
model, whose outputs copy their input): a TMX imported with the CLI answers its exact matches (before the
sentence cache), the worker attaches fuzzy matches as suggestions, a correction is served to the next job, and
the CLI exports the memory with it."""

import subprocess
import sys
from pathlib import Path

import pytest
import requests

from api.memory_files import read_memory_file
from tests.conftest import Stack
from tests.stack import ROOT

pytestmark = pytest.mark.slow
FILES = Path(__file__).parents[1] / "api" / "memory_files"


@pytest.fixture(scope="module")
def stack(tmp_path_factory, model_dir):
    """A stack whose worker writes whole sentences (the shared one stops at 8 tokens)."""
    s = Stack(tmp_path_factory.mktemp("memory-stack"), model_dir, max_new_tokens=64)
    try:
        yield s.start()
    finally:
        s.close()


def cli(stack, *args):
    command = [sys.executable, "-m", "transq_cli.main", "memory", *args, "--url", stack.api.url]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def post(stack, body):
    response = requests.post(stack.api.url + "/v1/jobs", json=body, timeout=30)
    assert response.status_code in (200, 202), response.text
    job = response.json()
    return job if job["status"] == "succeeded" else stack.wait_status(job["id"], ("succeeded", "failed"))


def test_exact_matches_fuzzy_suggestions_and_corrections_through_the_worker(stack, tmp_path):
    memory_id = cli(stack, "import", str(FILES / "omegat.tmx"), "--from", "zh", "--to", "en").strip()
    texts = ["今天北京的天气很好。", "今天上海的天气很好。谢谢大家的帮助！"]
    job = post(stack, {"texts": texts, "translation_memory": memory_id})
    assert job["status"] == "succeeded", job
    # the exact match from the memory; the rest copied by the model
    translations = job["result"]["translations"]  # (sentences joined as a target language writes them)
    assert translations[0] == "The weather in Beijing is fine today." and translations[1].replace(" ", "") == texts[1]
    assert job["from_memory"] == 1 and job["progress"]["sentences_done"] == 3
    assert job["suggestions"] == [
        {
            "sentence": 1,
            "matches": [
                {"source": "今天北京的天气很好。", "target": "The weather in Beijing is fine today.", "score": 80.0}
            ],
        }
    ]
    strict = post(stack, {"texts": texts, "translation_memory": memory_id, "translation_memory_threshold": 90})
    assert "suggestions" not in strict and strict["from_memory"] == 1

    fixed = {"translation_memory": memory_id, "corrections": {"1": "The weather in Shanghai is fine today."}}
    corrected = requests.post(f"{stack.api.url}/v1/jobs/{job['id']}/corrections", json=fixed, timeout=10)
    assert corrected.json() == {"translation_memory": memory_id, "added": 1, "updated": 0}
    again = requests.post(
        stack.api.url + "/v1/jobs", json={"text": texts[1], "translation_memory": memory_id}, timeout=10
    )
    assert again.status_code in (200, 202)
    view = (
        again.json() if again.json()["status"] == "succeeded" else stack.wait_status(again.json()["id"], ("succeeded",))
    )
    translation = view["result"]["translations"][0]  # the correction, then the model's (a space between: joined)
    assert translation.startswith("The weather in Shanghai is fine today.") and translation.endswith("谢谢大家的帮助！")
    assert view["from_memory"] == 1

    exported = tmp_path / "memory.tmx"
    cli(stack, "export", memory_id, "-o", str(exported))
    entries = read_memory_file(exported.read_bytes(), "tmx", "zh", "en", 100, 2000).entries
    assert entries["今天上海的天气很好。"] == "The weather in Shanghai is fine today." and len(entries) == 4
    assert memory_id in cli(stack, "list")
    cli(stack, "delete", memory_id)
    assert memory_id not in cli(stack, "list")


def test_a_human_translation_outranks_the_cache(stack):
    sentence = "谢谢你的帮助！"
    assert post(stack, {"text": sentence})["result"]["translations"] == [sentence]  # the copy model, now cached
    cached = requests.post(stack.api.url + "/v1/jobs", json={"text": sentence}, timeout=10).json()
    assert cached["status"] == "succeeded" and cached["cached_sentences"] == 1
    memory_id = cli(stack, "import", str(FILES / "omegat_tmx11.tmx"), "--from", "zh", "--to", "en").strip()
    job = requests.post(
        stack.api.url + "/v1/jobs", json={"text": sentence, "translation_memory": memory_id}, timeout=10
    )
    view = job.json()
    assert job.status_code == 200 and view["result"]["translations"] == ["Thank you for your help!"]
    assert view["from_memory"] == 1 and view["cached_sentences"] == 0
