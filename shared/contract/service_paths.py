"""The operations beside jobs: detection, usage, the served languages, health, metrics and this document."""

from __future__ import annotations

from typing import Any

from shared.contract.requests import DetectRequest
from shared.contract.responses import ERRORS, PUBLIC, READ_ERRORS, answer, error, json_body
from shared.contract.views import Detections, Health, Readiness, ServedLanguages, Usage


def service_paths() -> dict[str, Any]:
    return {
        "/v1/detect": {
            "post": {
                "summary": 'Detect the language of each text (as source_lang "auto" does); no job is made',
                "requestBody": json_body(DetectRequest),
                "responses": {
                    "200": answer("One detection per text, in order.", Detections),
                    **{code: ERRORS[code] for code in ("400", "401", "408", "413", "415", "422", "429")},
                },
            }
        },
        "/v1/usage": {
            "get": {
                "summary": "The caller's characters, cached share and jobs, this UTC day and month and the last",
                "responses": {"200": answer("The caller's usage and limits.", Usage), **READ_ERRORS},
            }
        },
        "/v1/languages": {
            "get": {
                "summary": "The served language pairs, with their models and live workers",
                "security": PUBLIC,
                "responses": {"200": answer("One entry per pair.", ServedLanguages)},
            }
        },
        "/healthz": {
            "get": {
                "summary": "Liveness",
                "security": PUBLIC,
                "responses": {"200": answer("The process is up.", Health)},
            }
        },
        "/readyz": {
            "get": {
                "summary": "Readiness",
                "security": PUBLIC,
                "responses": {
                    "200": answer("The API can accept jobs: Redis answers (workers may be none yet).", Readiness),
                    "503": error("Not ready: the broker Redis does not answer.", retry_after=True),
                },
            }
        },
        "/readyz/workers": {
            "get": {
                "summary": "Workers' readiness",
                "security": PUBLIC,
                "responses": {
                    "200": answer("At least one worker has its model loaded.", Readiness),
                    "503": error("No live worker (or the broker Redis does not answer).", retry_after=True),
                },
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus metrics",
                "security": PUBLIC,
                "responses": {
                    "200": answer("Prometheus text format.", {"type": "string"}, "text/plain"),
                    "503": answer("Redis unavailable.", {"type": "string"}, "text/plain"),
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "security": PUBLIC,
                "responses": {"200": answer("OpenAPI 3.", {"type": "object"})},
            }
        },
    }
