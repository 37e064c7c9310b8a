"""The one JSON error shape and its handlers: shared.errors' exceptions, HTTP errors and crashes."""

from __future__ import annotations

import logging
import time

from flask import Flask, current_app, jsonify
from werkzeug.exceptions import HTTPException

from shared.contract import ErrorBody, ErrorDetail
from shared.errors import ApiError, ErrorCode

log = logging.getLogger(__name__)


def error_response(code: ErrorCode, message: str, retry_after: int | None = None, status: int | None = None):  # type: ignore[no-untyped-def]
    """The one error shape (shared.contract.ErrorBody), with the code's HTTP status unless `status` says otherwise."""
    response = jsonify(ErrorBody(error=ErrorDetail(code=code.value, message=message)).model_dump())
    response.status_code = status or code.status
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
        return error_response(exc.code, exc.message, exc.retry_after)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):  # type: ignore[no-untyped-def]
        status = exc.code or 500
        if status == 413:
            return error_response(ErrorCode.PAYLOAD_TOO_LARGE, "the request body is over the byte limit")
        if status == 429:
            return error_response(ErrorCode.RATE_LIMITED, f"rate limit exceeded ({exc.description})", _retry_after())
        response = error_response(ErrorCode.for_status(status), exc.description or exc.name, status=status)
        if status == 405 and exc.get_response().headers.get("Allow"):
            response.headers["Allow"] = exc.get_response().headers["Allow"]
        return response

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):  # type: ignore[no-untyped-def]
        log.exception("unexpected error")
        return error_response(ErrorCode.INTERNAL_ERROR, "an unexpected error occurred")
