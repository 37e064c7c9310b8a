"""A callback's signature: `X-Transq-Timestamp` (unix seconds) and `X-Transq-Signature: sha256=<hex>`, the
HMAC-SHA256 with TRANSQ_CALLBACK_SECRET of

    <timestamp> "\\n" <owner> "\\n" <callback_url> "\\n" <body>

where `owner` is the id of the API key that submitted the job (`key:…`, what GET /v1/usage answers as
`client`; empty when the server has no API keys) and `callback_url` the URL exactly as submitted (no line
break can be in either: the policy refuses control characters in a URL). A receiver recomputes it with its
own URL and its own key's id, not with what the request claims, over the raw body, compares in constant
time, and refuses a timestamp too far from its clock: so a callback meant for another receiver or another
key, replayed to it, does not verify; nor does an old one. `X-Transq-Target` and `X-Transq-Owner` carry the
URL and the owner as signed, for the receiver's logs (docs/api.md shows the check)."""

from __future__ import annotations

import hashlib
import hmac
import time

TIMESTAMP_HEADER = "X-Transq-Timestamp"
SIGNATURE_HEADER = "X-Transq-Signature"
TARGET_HEADER = "X-Transq-Target"
OWNER_HEADER = "X-Transq-Owner"


def signed_text(timestamp: int, owner: str, url: str, body: bytes) -> bytes:
    return f"{timestamp}\n{owner}\n{url}\n".encode() + body


def signature(secret: str, timestamp: int, owner: str, url: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), signed_text(timestamp, owner, url, body), hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signed_headers(secret: str, body: bytes, url: str, owner: str, now: float | None = None) -> dict[str, str]:
    """The signature's headers, and the target and owner it covers (the URL's characters outside ASCII
    percent-encoded in its header: a header is ASCII)."""
    timestamp = int(time.time() if now is None else now)
    return {
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(secret, timestamp, owner, url, body),
        TARGET_HEADER: ascii_only(url),
        OWNER_HEADER: owner,
    }


def verify(
    secret: str, timestamp: str, signature_header: str, body: bytes, url: str, owner: str, tolerance: float = 300
) -> bool:
    """What a receiver does (docs/api.md shows it): a fresh timestamp and a signature that matches its own
    URL and key id."""
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > tolerance:
        return False
    return hmac.compare_digest(signature(secret, int(timestamp), owner, url, body), signature_header)


def ascii_only(text: str) -> str:
    """`text` with each character outside printable ASCII percent-encoded (as UTF-8)."""
    return "".join(c if " " < c < "\x7f" else "".join(f"%{b:02X}" for b in c.encode()) for c in text)
