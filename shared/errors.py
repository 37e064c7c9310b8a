"""Every error code a client can see with its HTTP status, the one place they are mapped; and one exception
type per failure, each with its code.

The API answers `{"error": {"code", "message"}}` with the code's status (api.errors raises nothing, it
answers these); the document stage raises them too, and a job that fails with one records its code and
message. A failed job carries one of the job failure codes in its record; the calls that wait on a job
(POST /v1/translate, /api/translate) answer it with `job_failure_status`.
"""

from __future__ import annotations

from enum import Enum


class ErrorCode(str, Enum):
    status: int

    def __new__(cls, code: str, status: int) -> ErrorCode:
        member = str.__new__(cls, code)
        member._value_ = code
        member.status = status
        return member

    # The request
    BAD_REQUEST = "bad_request", 400
    INVALID_JSON = "invalid_json", 400
    UNAUTHORIZED = "unauthorized", 401
    FORBIDDEN = "forbidden", 403
    NOT_FOUND = "not_found", 404
    METHOD_NOT_ALLOWED = "method_not_allowed", 405
    REQUEST_TIMEOUT = "request_timeout", 408
    CONFLICT = "conflict", 409
    PAYLOAD_TOO_LARGE = "payload_too_large", 413
    REQUEST_LINE_TOO_LONG = "request_line_too_long", 414
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type", 415
    EXPECTATION_FAILED = "expectation_failed", 417
    VALIDATION_ERROR = "validation_error", 422
    UNSUPPORTED_LANGUAGE_PAIR = "unsupported_language_pair", 422
    IDEMPOTENCY_MISMATCH = "idempotency_mismatch", 422
    INVALID_DOCUMENT = "invalid_document", 422
    DOCUMENT_TOO_COMPLEX = "document_too_complex", 422
    RATE_LIMITED = "rate_limited", 429
    STORAGE_QUOTA_EXCEEDED = "storage_quota_exceeded", 429
    QUOTA_EXCEEDED = "quota_exceeded", 429
    TOO_MANY_STREAMS = "too_many_streams", 429
    HEADERS_TOO_LARGE = "headers_too_large", 431
    # The service
    INTERNAL_ERROR = "internal_error", 500
    NOT_IMPLEMENTED = "not_implemented", 501
    OVERLOADED = "overloaded", 503
    UNAVAILABLE = "unavailable", 503
    # A failed job (its record's error.code); `status` is what a call waiting on it answers
    TIMEOUT = "timeout", 504
    WORKER_LOST = "worker_lost", 502
    RESOURCE_EXHAUSTED = "resource_exhausted", 422

    @classmethod
    def for_status(cls, status: int) -> ErrorCode:
        """The general code of an HTTP status (for errors raised outside transq's own code)."""
        return _BY_STATUS.get(status, cls.BAD_REQUEST if status < 500 else cls.INTERNAL_ERROR)


_BY_STATUS = {
    400: ErrorCode.BAD_REQUEST,
    401: ErrorCode.UNAUTHORIZED,
    403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    408: ErrorCode.REQUEST_TIMEOUT,
    409: ErrorCode.CONFLICT,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    414: ErrorCode.REQUEST_LINE_TOO_LONG,
    415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    417: ErrorCode.EXPECTATION_FAILED,
    422: ErrorCode.VALIDATION_ERROR,
    429: ErrorCode.RATE_LIMITED,
    431: ErrorCode.HEADERS_TOO_LARGE,
    500: ErrorCode.INTERNAL_ERROR,
    501: ErrorCode.NOT_IMPLEMENTED,
    503: ErrorCode.UNAVAILABLE,
}


def job_failure_status(code: str) -> int:
    """The HTTP status a call that waited answers a failed job with: never 500 (the API did not fail); an
    unknown or internal code is the backend's failure (502)."""
    try:
        member = ErrorCode(code)
    except ValueError:
        return 502
    return member.status if member.status < 500 or member in (ErrorCode.TIMEOUT, ErrorCode.WORKER_LOST) else 502


class ApiError(Exception):
    code = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class InvalidJson(ApiError):
    code = ErrorCode.INVALID_JSON


class BadRequest(ApiError):
    code = ErrorCode.BAD_REQUEST


class Unauthorized(ApiError):
    code = ErrorCode.UNAUTHORIZED


class NotFound(ApiError):
    code = ErrorCode.NOT_FOUND


class RequestTimeout(ApiError):
    code = ErrorCode.REQUEST_TIMEOUT


class Conflict(ApiError):
    code = ErrorCode.CONFLICT


class PayloadTooLarge(ApiError):
    code = ErrorCode.PAYLOAD_TOO_LARGE


class UnsupportedMediaType(ApiError):
    code = ErrorCode.UNSUPPORTED_MEDIA_TYPE


class ValidationError(ApiError):
    code = ErrorCode.VALIDATION_ERROR


class UnsupportedLanguagePair(ApiError):
    code = ErrorCode.UNSUPPORTED_LANGUAGE_PAIR


class IdempotencyMismatch(ApiError):
    code = ErrorCode.IDEMPOTENCY_MISMATCH


class RateLimited(ApiError):
    code = ErrorCode.RATE_LIMITED


class StorageQuotaExceeded(ApiError):
    code = ErrorCode.STORAGE_QUOTA_EXCEEDED


class QuotaExceeded(ApiError):
    """Characters over a client's daily or monthly limit (shared.store.quota): 429 at submission, or a
    document's job failed by the document stage once its text is parsed."""

    code = ErrorCode.QUOTA_EXCEEDED


class TooManyStreams(ApiError):
    """A client holding TRANSQ_EVENT_STREAMS_PER_KEY event streams asks for another (api.job_events)."""

    code = ErrorCode.TOO_MANY_STREAMS


class Overloaded(ApiError):
    code = ErrorCode.OVERLOADED


class Unavailable(ApiError):
    code = ErrorCode.UNAVAILABLE


class InvalidDocument(ApiError):
    code = ErrorCode.INVALID_DOCUMENT


class DocumentTooComplex(ApiError):
    code = ErrorCode.DOCUMENT_TOO_COMPLEX


class Expired(ApiError):
    """What a job needed was gone before it could be done (its record fails with `timeout`)."""

    code = ErrorCode.TIMEOUT
