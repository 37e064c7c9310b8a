"""A document job's characters, settled once the document stage has parsed them: the API charged its upload
what it could count (a text document's file, a .docx nothing: api.documents.job_documents) and noted that
charge in the job's layout (`quota`: the client, the characters, when); the job is charged the characters
of the text parsed from it, through the same quota (shared.store.quota.CharacterQuota.settle), or, over the
client's daily or monthly limit, fails `quota_exceeded` with its upload refunded (a job over the limit
costs nothing)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from shared.errors import QuotaExceeded
from shared.store.backends import Services
from shared.store.job_record import Job
from shared.store.sentence_cache import CacheAnswer


def settle(
    services: Services,
    job: Job,
    layout: dict[str, Any],
    characters: int,
    sentences: list[str],
    cached: CacheAnswer | None,
) -> None:
    """Charge the job its parsed `characters` (the share the cache answered counted apart), or raise
    QuotaExceeded naming the limit. A job uploaded before documents were settled (no note) is left as it was."""
    note = layout.get("quota")
    if not isinstance(note, dict):
        return
    hits = sum(len(s) for s, t in zip(sentences, cached.translations) if t is not None) if cached else 0
    refused = services.quota.settle(
        note["client"],
        services.keys.job(job.id),
        characters,
        hits,
        deposit=int(note["characters"]),
        at=datetime.fromisoformat(note["at"]),
    )
    if refused is not None:
        raise QuotaExceeded(refused.message(f"this document's {characters} characters"))
