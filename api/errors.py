"""One exception type per failure the API reports, and the one JSON error handler."""

from __future__ import annotations

import logging
import time

from flask import Flask, current_app, jsonify
from werkzeug.exceptions import HTTPException

log = logging.getLogger(__name__)


class ApiError(Exception):
    status = 500
    code = "internal_error"

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class InvalidJson(ApiError):
    status, code = 400, "invalid_json"


class Unauthorized(ApiError):
    status, code = 401, "unauthorized"


class NotFound(ApiError):
    status, code = 404, "not_found"


class Conflict(ApiError):
    status, code = 409, "conflict"


class PayloadTooLarge(ApiError):
    status, code = 413, "payload_too_large"


class UnsupportedMediaType(ApiError):
    status, code = 415, "unsupported_media_type"


class ValidationError(ApiError):
    status, code = 422, "validation_error"


class IdempotencyMismatch(ApiError):
    status, code = 422, "idempotency_mismatch"


class RequestTimeout(ApiError):
    status, code = 408, "request_timeout"


class BadRequest(ApiError):
    status, code = 400, "bad_request"


class RateLimited(ApiError):
    status, code = 429, "rate_limited"


class Overloaded(ApiError):
    status, code = 503, "overloaded"


class Unavailable(ApiError):
    status, code = 503, "unavailable"


_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def error_response(status: int, code: str, message: str, retry_after: int | None = None):  # type: ignore[no-untyped-def]
    response = jsonify({"error": {"code": code, "message": message}})
    response.status_code = status
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _retry_after() -> int:
    """Seconds until the exceeded rate-limit window resets."""
    limiter = current_app.extensions.get("transq_limiter")
    current = getattr(limiter, "current_limit", None)
    if current is None:
        return 1
    return max(1, int(current.reset_at - time.time()) + 1)


def register_error_handlers(app: Flask) -> None:
    """Every error, routes and crashes included, answers {"error": {"code", "message"}}."""

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError):  # type: ignore[no-untyped-def]
        return error_response(exc.status, exc.code, exc.message, exc.retry_after)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):  # type: ignore[no-untyped-def]
        status = exc.code or 500
        if status == 413:
            return error_response(413, "payload_too_large", "the request body is over the byte limit")
        if status == 429:
            return error_response(429, "rate_limited", f"rate limit exceeded ({exc.description})", _retry_after())
        response = error_response(status, _HTTP_CODES.get(status, "http_error"), exc.description or exc.name)
        if status == 405 and exc.get_response().headers.get("Allow"):
            response.headers["Allow"] = exc.get_response().headers["Allow"]
        return response

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):  # type: ignore[no-untyped-def]
        log.exception("unexpected error")
        return error_response(500, "internal_error", "an unexpected error occurred")
