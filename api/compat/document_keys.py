"""A document job's key: what DeepL's document calls (`document_key`) and LibreTranslate's download URL
present besides the job's id. It is an HMAC of the id under the API key ids' secret (shared.store.key_ids),
so only the one who uploaded the document, who was given it, can read the document."""

from __future__ import annotations

import hashlib
import hmac

from api.current import services
from shared.errors import NotFound
from shared.store.key_ids import KeyIds


def document_key(job_id: str) -> str:
    settings = services().settings
    secret = KeyIds(services().redis, services().keys, settings.key_id_secret).secret()
    return hmac.new(secret, f"document:{job_id}".encode(), hashlib.sha256).hexdigest()


def check_document_key(job_id: str, presented: str | None) -> None:
    """404, as for an unknown document, unless `presented` is the job's key."""
    if not presented or not hmac.compare_digest(presented.encode(), document_key(job_id).encode()):
        raise NotFound(f"no document {job_id} with this document_key")
