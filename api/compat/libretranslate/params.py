"""A LibreTranslate request: its parameters from a JSON, form-encoded or multipart body (or the query
string), read once per request, bounded as every body is (api.validation), and kept on `g`, since the key
check (api.auth) reads its `api_key` before the view reads the rest. Its errors: {"error": "..."}."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from flask import Blueprint, Request, g, request

from api.compat.reshape import reshaping
from api.current import services
from api.documents.blueprint import read_upload
from api.validation import read_body, read_json_object
from shared.errors import BadRequest, ErrorCode

_FILE_FIELDS = ("source", "target", "api_key")
_STATUS = {
    ErrorCode.UNAUTHORIZED: 403,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.REQUEST_TIMEOUT: 408,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.QUOTA_EXCEEDED: 429,
    ErrorCode.STORAGE_QUOTA_EXCEEDED: 429,
    ErrorCode.OVERLOADED: 503,
    ErrorCode.UNAVAILABLE: 503,
    ErrorCode.TIMEOUT: 504,
}


def shape(code: ErrorCode, message: str, status: int) -> tuple[int, dict]:
    """LibreTranslate's status: 400 a bad request, 403 a bad key, 429 slow down; 503 (with Retry-After)
    under back-pressure, 504 a wait that ran out; 500 a translation that failed."""
    return _STATUS.get(code, 400 if status < 500 else 500), {"error": message}


def blueprint(name: str) -> Blueprint:
    return reshaping(Blueprint(name, __name__), shape)


def params() -> dict[str, Any]:
    """The request's parameters (a list stays a list: `q` may be one); read on first use."""
    if "compat_params" not in g:
        g.compat_params = _read()
    return g.compat_params


def upload() -> tuple[bytes, str | None, str]:
    """A /translate_file request's file: (bytes, file name, media type); 400 unless a multipart form."""
    params()
    if "compat_file" not in g:
        raise BadRequest("Invalid request: missing file parameter (a multipart/form-data `file`)")
    return g.compat_file


def _read() -> dict[str, Any]:
    settings = services().settings
    values: dict[str, Any] = dict(request.args.items())
    mimetype = request.mimetype or ""
    if mimetype == "multipart/form-data":
        fields, data, filename, media_type = read_upload(_FILE_FIELDS)
        g.compat_file = (data, filename, media_type)
        return {**values, **fields}
    if mimetype == "application/json" or mimetype.endswith("+json"):
        return {**values, **read_json_object(request, settings)}
    raw = read_body(request, settings.max_body_bytes, settings.request_timeout)
    try:
        form = parse_qs(raw.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        raise BadRequest("Invalid request: the body is not valid UTF-8") from None
    return {**values, **{key: found[0] if len(found) == 1 else found for key, found in form.items()}}


def presented_key(http: Request) -> list[str]:
    """The `api_key`s of a LibreTranslate request, the query's and the body's (none of another API's: their
    bodies are theirs to read); a key that is not a string is none."""
    if not (http.blueprint or "").startswith("libretranslate"):
        return []
    body = params().get("api_key")
    given = [*http.args.getlist("api_key"), *(body if isinstance(body, list) else [body])]
    return [key if isinstance(key, str) else "\x00" for key in given if key is not None]  # \x00: no key


def required(name: str) -> Any:
    value = params().get(name)
    if value is None or value == "" or value == []:
        raise BadRequest(f"Invalid request: missing {name} parameter")
    return value
