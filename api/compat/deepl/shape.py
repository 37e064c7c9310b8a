"""How DeepL's API says things: its key header, its error body {"message"} and its status codes (403 a bad
key, 456 the character quota, 429 too many requests, 413 too large, 400 any other bad request)."""

from __future__ import annotations

from flask import Blueprint, Request

from api.compat.reshape import reshaping
from shared.errors import ErrorCode

_PREFIX = "deepl-auth-key "
_STATUS = {
    ErrorCode.UNAUTHORIZED: 403,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.REQUEST_TIMEOUT: 408,
    ErrorCode.PAYLOAD_TOO_LARGE: 413,
    ErrorCode.REQUEST_LINE_TOO_LONG: 414,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: 415,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.STORAGE_QUOTA_EXCEEDED: 429,
    ErrorCode.QUOTA_EXCEEDED: 456,
}


def presented_key(request: Request) -> list[str]:
    """The keys of `Authorization: DeepL-Auth-Key <key>` headers (one, where the request is sound)."""
    headers = request.headers.getlist("Authorization")
    return [header[len(_PREFIX) :] for header in headers if header.lower().startswith(_PREFIX)]


def shape(code: ErrorCode, message: str, status: int) -> tuple[int, dict]:
    """DeepL's status for transq's error; any other refusal of the request is 400, the service's own
    failures keep their 5xx (503 with Retry-After under back-pressure, 504 a wait that ran out)."""
    return _STATUS.get(code, 400 if status < 500 else status), {"message": message}


def blueprint(name: str) -> Blueprint:
    """A blueprint of DeepL's API: its routes under /v2, its errors in DeepL's shape."""
    return reshaping(Blueprint(name, __name__, url_prefix="/v2"), shape)
