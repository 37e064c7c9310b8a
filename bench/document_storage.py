"""What a document job holds in the broker: `python -m bench.document_storage [--jobs 20]`.

Uploads documents through the real app (Flask's test client, a private redis-server, no worker) and
reads redis `used_memory` before and after: the bytes each accepted upload holds while it waits
(its compressed source and its record), against the upload's own size (what the job record held before
the document stage: the whole source, for TRANSQ_RESULT_TTL).
"""

from __future__ import annotations

import argparse
import io
import logging
import random
import tempfile
from pathlib import Path

import redis

from api import create_app
from bench.common import machine, table
from devstack.redis_server import RedisServer
from tests.api.documents import samples
from tests.stack import ROOT, stack_settings


def _documents() -> dict[str, tuple[str, bytes]]:
    """Documents of 2,000 sentences drawn (seeded) from the characters of worker/translation/model/data/corpus.zh.txt."""
    alphabet = sorted(
        set((ROOT / "worker" / "translation" / "model" / "data" / "corpus.zh.txt").read_text()) - set("\n 。")
    )
    rng = random.Random(0)
    lines = ["".join(rng.choices(alphabet, k=rng.randint(8, 40))) + "。" for _ in range(2000)]
    cues = "".join(f"{i + 1}\n00:00:{i % 60:02d},000 --> 00:00:{i % 60:02d},900\n{t}\n\n" for i, t in enumerate(lines))
    return {
        "Markdown (2,000 paragraphs)": ("notes.md", ("# 标题\n\n" + "\n\n".join(lines)).encode()),
        "HTML (2,000 paragraphs)": ("page.html", "".join(f"<p class='x'>{t}</p>\n" for t in lines).encode()),
        "SubRip (2,000 cues)": ("film.srt", cues.encode()),
        "Word (tests' sample)": ("report.docx", samples.docx_bytes()),
    }


def measure(jobs: int) -> list[list[object]]:
    rows = []
    with RedisServer() as server, tempfile.TemporaryDirectory() as tmp:
        client = redis.Redis.from_url(server.url)
        app = create_app({"SETTINGS": stack_settings(server.url, Path(tmp) / "none", log_level="WARNING")})
        http = app.test_client()
        http.post("/v1/documents", data={"file": (io.BytesIO(b"warm-up"), "x.txt")}, content_type="multipart/form-data")
        for label, (name, data) in _documents().items():
            client.flushall()
            before = int(client.info("memory")["used_memory"])
            for _ in range(jobs):
                form = {"file": (io.BytesIO(data), name)}
                response = http.post("/v1/documents", data=form, content_type="multipart/form-data")
                assert response.status_code == 202, response.json
            held = (int(client.info("memory")["used_memory"]) - before) / jobs
            stored = sum(client.strlen(k) for k in client.scan_iter("transq:docsrc:*")) / jobs
            rows.append([label, f"{len(data) / 1024:.1f}", f"{stored / 1024:.1f}", f"{held / 1024:.1f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(machine())
    headers = ["document", "upload KiB", "stored source KiB (compressed)", "broker KiB per waiting job"]
    print(table(headers, measure(args.jobs)))


if __name__ == "__main__":
    main()
