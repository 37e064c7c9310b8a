"""Limits a hostile client walked around (issue 31, item 5), through gunicorn, the document stage and a real
Redis, keys off so that each test is its own client address: a job's inline glossary and the stored
glossaries count against the client's storage (stored ones expire, and are kept per address), and a .docx is
charged the characters the document stage parses, its job failed `quota_exceeded` over the limit with
nothing charged. (An idempotent retry near the quota: tests/api/test_usage.py.)"""

import io
import json
import time

import docx
import pytest
import redis
import requests
from requests.adapters import HTTPAdapter

from devstack.redis_server import RedisServer
from shared.store.keys import Keys
from tests.api.documents import samples
from tests.stack import ApiProcess, DocumentStageProcess, stack_settings

pytestmark = pytest.mark.slow
STORAGE = 1_048_576
PER_DAY = 60_000


class _From(HTTPAdapter):
    """Connections from one loopback address: with keys off, the client a request counts as."""

    def __init__(self, address: str):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


class Client:
    def __init__(self, url: str, address: str):
        self.url, self.address = url, address
        self.session = requests.Session()
        self.session.mount("http://", _From(address))

    def post(self, path: str, **kwargs) -> requests.Response:
        return self.session.post(self.url + path, timeout=60, **kwargs)

    def get(self, path: str) -> requests.Response:
        return self.session.get(self.url + path, timeout=30)

    def delete(self, path: str) -> requests.Response:
        return self.session.delete(self.url + path, timeout=30)

    def wait(self, job_id: str, statuses: tuple[str, ...], timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            job = self.get(f"/v1/jobs/{job_id}").json()
            if job["status"] in statuses or time.monotonic() > deadline:
                return job
            time.sleep(0.1)

    def characters_today(self) -> tuple[int, int]:
        day = self.get("/v1/usage").json()["day"]["current"]
        return day["characters"], day["jobs"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("walked-limits")
    with RedisServer() as server:
        settings = stack_settings(
            server.url, tmp / "no-model", client_storage_bytes=STORAGE, quota_chars_per_day=PER_DAY
        )
        api = ApiProcess(settings, tmp / "api.log").start(workers=1)
        stage = DocumentStageProcess(settings, tmp / "documents.log", name="documents")
        try:
            stage.start()
            yield api, server
        finally:
            stage.stop()
            api.stop()


def held(server, client: str) -> int:
    """What the client's storage account holds, in bytes."""
    return int(redis.Redis.from_url(server.url).get(Keys().usage(client) + ":bytes") or 0)


def texts_of(server, job_id: str) -> list[str]:
    """A parsed document job's texts (its units) as its record holds them."""
    return json.loads(redis.Redis.from_url(server.url).hget(Keys().job(job_id), "texts"))


def big_glossary(tag: str) -> dict[str, str]:
    """1,000 terms of 100 characters each way: about 400 KB of JSON (the largest glossary the limits allow)."""
    return {f"{tag}{i:04d}" + "术" * (95 - len(tag)): "T" * 100 for i in range(1000)}


def test_a_jobs_inline_glossary_counts_against_its_clients_storage(stack):
    """The trial: 12 jobs, each with a 570 KB glossary, held 6.8 MiB while the counter said 3 KB (1 MiB limit)."""
    api, server = stack
    client = Client(api.url, "127.0.0.2")
    glossary = big_glossary("j")
    size = len(json.dumps(glossary, ensure_ascii=False).encode())
    answers = [client.post("/v1/jobs", json={"text": f"你好{i}。", "glossary": glossary}) for i in range(12)]
    accepted = [a for a in answers if a.status_code == 202]
    refused = [a for a in answers if a.status_code == 429]
    assert len(accepted) + len(refused) == 12, [a.text[:200] for a in answers]
    assert len(accepted) == STORAGE // size, (len(accepted), size)  # the first always fits: then held + new
    assert {a.json()["error"]["code"] for a in refused} == {"storage_quota_exceeded"}
    assert "TRANSQ_CLIENT_STORAGE_BYTES" in refused[0].json()["error"]["message"]
    assert held(server, "addr:127.0.0.2") >= len(accepted) * size


def test_stored_glossaries_count_expire_and_belong_to_their_address(stack):
    """Stored glossaries never expired nor counted, and with keys off all addresses shared one pool of 100."""
    api, server = stack
    mine, theirs = Client(api.url, "127.0.0.3"), Client(api.url, "127.0.0.4")
    created = [mine.post("/v1/glossaries", json={"terms": big_glossary(f"g{i}")}) for i in range(3)]
    assert [c.status_code for c in created] == [201, 201, 429], [c.text[:200] for c in created]
    assert created[2].json()["error"]["code"] == "storage_quota_exceeded"
    first = created[0].json()["id"]
    before = held(server, "addr:127.0.0.3")
    assert before > 750_000
    r = redis.Redis.from_url(server.url)
    record = [k for k in r.scan_iter(match=f"{Keys().prefix}glossary:*:{first}")]
    assert len(record) == 1 and 0 < r.ttl(record[0]) <= 30 * 86_400  # TRANSQ_GLOSSARY_TTL

    # Another address (keys off) sees none of them and has its own room.
    assert theirs.get("/v1/glossaries").json() == {"glossaries": []}
    assert theirs.get(f"/v1/glossaries/{first}").status_code == 404
    assert theirs.post("/v1/glossaries", json={"terms": {"北京": "Beijing"}}).status_code == 201
    assert len(mine.get("/v1/glossaries").json()["glossaries"]) == 2

    # Deleting one frees its bytes: the next fits.
    assert mine.delete(f"/v1/glossaries/{first}").status_code == 204
    assert held(server, "addr:127.0.0.3") < before - 350_000
    assert mine.post("/v1/glossaries", json={"terms": big_glossary("g9")}).status_code == 201


def long_docx(paragraphs: int, sentence: str, per_paragraph: int) -> bytes:
    document = docx.Document()
    for _ in range(paragraphs):
        document.add_paragraph(sentence * per_paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_docx_is_charged_the_characters_the_stage_parses(stack):
    """The trial: a 7,211-byte .docx of 98,907 characters was accepted under a 60,000-character daily limit
    (charged its bytes), where the same text as JSON got 429."""
    api, server = stack
    client = Client(api.url, "127.0.0.5")
    sentence = "今天北京的天气很好，我们一起去公园散步吧。"  # 21 characters
    data = long_docx(100, sentence, 47)  # 98,700 characters
    assert len(data) < PER_DAY  # its bytes are under the limit, its characters are not
    json_answer = client.post("/v1/jobs", json={"texts": [sentence * 47] * 100})
    assert json_answer.status_code == 429 and json_answer.json()["error"]["code"] == "quota_exceeded"

    upload = client.post("/v1/documents", files={"file": ("long.docx", data)})
    assert upload.status_code == 202, upload.text
    job = client.wait(upload.json()["id"], ("failed", "queued", "succeeded"))
    assert job["status"] == "failed", job
    assert job["error"]["code"] == "quota_exceeded"
    assert "98700 characters" in job["error"]["message"] and "daily limit of 60000" in job["error"]["message"]
    assert client.characters_today() == (0, 0)  # a job failed over the limit costs nothing

    # A small one is charged its parsed characters, not its bytes (about 36 KB).
    small = samples.docx_bytes()
    upload = client.post("/v1/documents", files={"file": ("report.docx", small)})
    job = client.wait(upload.json()["id"], ("failed", "queued", "succeeded"))
    assert job["status"] == "queued", job  # no worker: parsed and waiting
    texts = texts_of(server, job["id"])
    assert client.characters_today() == (sum(len(t) for t in texts), 1)
    assert 0 < sum(len(t) for t in texts) < 200 < len(small)

    # A text document is charged its file's characters at upload, then what its text is once parsed.
    html = samples.HTML.encode()
    upload = client.post("/v1/documents", files={"file": ("page.html", html)})
    job = client.wait(upload.json()["id"], ("failed", "queued", "succeeded"))
    assert job["status"] == "queued", job
    parsed = texts_of(server, job["id"])
    assert client.characters_today() == (sum(len(t) for t in texts) + sum(len(t) for t in parsed), 2)
