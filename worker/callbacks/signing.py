"""A callback's signature: `X-Transq-Timestamp` (unix seconds) and `X-Transq-Signature: sha256=<hex>`, the
HMAC-SHA256 of `<timestamp>.<body>` with TRANSQ_CALLBACK_SECRET. A receiver recomputes it over the raw body,
compares in constant time, and refuses a timestamp too far from its clock (a replayed request)."""

from __future__ import annotations

import hashlib
import hmac
import time

TIMESTAMP_HEADER = "X-Transq-Timestamp"
SIGNATURE_HEADER = "X-Transq-Signature"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signed_headers(secret: str, body: bytes, now: float | None = None) -> dict[str, str]:
    timestamp = int(time.time() if now is None else now)
    return {TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: signature(secret, timestamp, body)}


def verify(secret: str, timestamp: str, signature_header: str, body: bytes, tolerance: float = 300) -> bool:
    """What a receiver does (docs/api.md shows it): a fresh timestamp and a matching signature."""
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > tolerance:
        return False
    return hmac.compare_digest(signature(secret, int(timestamp), body), signature_header)
