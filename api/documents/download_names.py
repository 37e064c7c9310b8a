"""The file name a translated document downloads as, and its Content-Disposition header.

The name comes from the upload (a client's choice): it is cleaned of control, format (bidi overrides,
zero-width) and separator characters, path parts and quotes, and bounded to MAX_NAME_CHARS, its extension
kept. The header carries it twice (RFC 6266): `filename*=UTF-8''…` for clients that read it, and a plain
ASCII `filename="…"` that `curl -OJ` and older clients use.
"""

from __future__ import annotations

import unicodedata
from pathlib import PurePosixPath
from urllib.parse import quote

MAX_NAME_CHARS = 100
_DROPPED_CATEGORIES = ("C", "Z")  # control, format, surrogate, private, unassigned; separators but space
_TRANSLATED_SUFFIXES = {".pot": ".po"}  # a gettext template, translated, is a catalog
_ASCII_KEPT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_ ()+,")


def download_name(filename: str | None, job_id: str, extension: str, route: str) -> str:
    """report.md -> report.en.md (the target language from the job's route), cleaned and bounded."""
    parts = route.split("-")
    target = parts[1] if len(parts) > 2 else "translated"
    base = PurePosixPath(_clean((filename or "").replace("\\", "/")).replace("/", " ").strip(" .") or job_id)
    stem = _clean(base.stem if base.suffix else base.name).strip(" .") or "document"
    suffix = base.suffix if base.suffix and len(base.suffix) <= 16 else extension
    suffix = _TRANSLATED_SUFFIXES.get(suffix.lower(), suffix)
    tail = f".{_clean(target)[:16]}{suffix}"
    return stem[: MAX_NAME_CHARS - len(tail)].rstrip(" .") + tail


def content_disposition(name: str) -> str:
    fallback = "".join(ch if ch in _ASCII_KEPT else "_" for ch in _ascii_fold(name))
    stem, dot, rest = fallback.partition(".")
    if not any(ch.isalnum() for ch in stem):  # a name in another script: its extensions are kept
        fallback = "document" + dot + rest
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


def _clean(text: str) -> str:
    """Without control, format or separator characters (a space stays) and without quotes."""
    kept = (
        ch for ch in text if ch == " " or (unicodedata.category(ch)[0] not in _DROPPED_CATEGORIES and ch not in "\"'`;")
    )
    return "".join(kept)


def _ascii_fold(text: str) -> str:
    """Latin letters without their accents; anything else not ASCII becomes `_`."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch if ch.isascii() else "_" for ch in decomposed if not unicodedata.combining(ch))
