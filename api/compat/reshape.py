"""Errors in another API's shape. Every error of a compat route is first transq's own
({"error": {"code", "message"}}, with its status and Retry-After: api.errors decides them, in one place);
an after-request hook then rewrites body and status as that API's clients expect."""

from __future__ import annotations

import json
from typing import Callable

from flask import Blueprint, Response

from shared.errors import ErrorCode

# (code, message) -> (status, body)
Shape = Callable[[ErrorCode, str, int], tuple[int, dict]]


def reshaping(blueprint: Blueprint, shape: Shape) -> Blueprint:
    """The blueprint, its error responses rewritten by `shape` (headers such as Retry-After kept)."""

    @blueprint.after_request
    def _reshape(response: Response) -> Response:
        if response.status_code < 400 or not response.is_json:
            return response
        body = response.get_json(silent=True)
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict):
            return response
        try:
            code = ErrorCode(error.get("code"))
        except ValueError:
            code = ErrorCode.for_status(response.status_code)
        status, shaped = shape(code, str(error.get("message", "")), response.status_code)
        response.set_data(json.dumps(shaped, ensure_ascii=False))
        response.status_code = status
        return response

    return blueprint
