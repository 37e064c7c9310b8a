"""One enum of error codes, mapped to HTTP statuses in one place."""

from shared.errors import ErrorCode, job_failure_status


def test_every_code_has_its_status_and_general_codes_cover_statuses():
    assert ErrorCode.UNSUPPORTED_LANGUAGE_PAIR.status == 422 and ErrorCode("overloaded") is ErrorCode.OVERLOADED
    assert (
        ErrorCode.for_status(431) is ErrorCode.HEADERS_TOO_LARGE and ErrorCode.for_status(418) is ErrorCode.BAD_REQUEST
    )


def test_a_failed_job_is_never_a_500_for_the_calls_that_wait():
    statuses = {
        code: job_failure_status(code)
        for code in ("timeout", "worker_lost", "resource_exhausted", "internal_error", "?")
    }
    assert statuses == {"timeout": 504, "worker_lost": 502, "resource_exhausted": 422, "internal_error": 502, "?": 502}
