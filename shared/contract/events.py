"""The events of GET /v1/jobs/{job_id}/events (Server-Sent Events), one model per event type: what each event's
`data:` line holds (JSON). The store writes `sentence` and `progress` data as these models describe
(shared.store.job_events); the API adds `document` and `done` (api.job_events); /openapi.json documents them
(api.openapi)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from shared.contract.fidelity_views import SentenceFidelity
from shared.contract.responses import JOB_ID, READ_ERRORS, error, ref
from shared.contract.views import JobView, View
from shared.store.job_events import EVENT_ID_PATTERN
from shared.store.job_status import JobStatus


class EventType(StrEnum):
    """An event's `event:` line."""

    SENTENCE = "sentence"
    PROGRESS = "progress"
    DOCUMENT = "document"
    DONE = "done"


class SentenceEvent(View):
    """`sentence`: one sentence of the job, translated and recorded, in the order the workers record them (any
    order; an index may come again after a takeover or a retried write: keep the last)."""

    index: int = Field(ge=0, description="The sentence's position among all the job's sentences, texts in order.")
    translation: str
    score: float = Field(None, description="Its confidence, when the job asked for `scores` and one is known.")  # type: ignore[assignment]
    fidelity: SentenceFidelity = Field(None, description="What the fidelity check kept, repaired and flagged.")  # type: ignore[assignment]


class ProgressEvent(View):
    """`progress`: the job's status and progress, on each status change (a takeover's claim too) and after
    each recording of new sentences."""

    status: JobStatus
    sentences_done: int
    sentences_total: int


class DocumentEvent(View):
    """`document`: a document job's translated document is rendered and can be downloaded (before its `done`)."""

    download: str = Field(description="The translated document's URL (GET, with the same key).")


class DoneEvent(JobView):
    """`done`: the job is final; its view, as GET /v1/jobs/{job_id} shows it. The stream ends after it."""


EVENTS: dict[EventType, type[View]] = {
    EventType.SENTENCE: SentenceEvent,
    EventType.PROGRESS: ProgressEvent,
    EventType.DOCUMENT: DocumentEvent,
    EventType.DONE: DoneEvent,
}


def event_paths() -> dict[str, Any]:
    """GET /v1/jobs/{job_id}/events in /openapi.json: a text/event-stream whose events' data are the models above."""
    described = ", ".join(f"`{kind}` ({model.__name__})" for kind, model in EVENTS.items())
    return {
        "/v1/jobs/{job_id}/events": {
            "get": {
                "summary": "Follow a job: its sentences as they are translated, its progress, then its view",
                "description": (
                    "Server-Sent Events. Each event has an `id:` (resume after it with the Last-Event-ID header, "
                    "as EventSource does by itself), an `event:` type and one `data:` line of JSON: "
                    f"{described}. The stream replays the job's events from the start (or after Last-Event-ID), "
                    "follows it, and ends after `done`; it also ends after TRANSQ_EVENT_STREAM_SECONDS, or "
                    "TRANSQ_EVENT_IDLE_SECONDS without an event (reconnect). Comment lines keep it open."
                ),
                "parameters": [
                    JOB_ID,
                    {
                        "name": "Last-Event-ID",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string", "pattern": EVENT_ID_PATTERN},
                        "description": "The id of the last event received: the stream resumes after it.",
                    },
                ],
                "responses": {
                    "200": {
                        "description": "The job's events.",
                        "content": {
                            "text/event-stream": {
                                "schema": {"type": "string", "description": "`id:`, `event:` and `data:` lines."},
                                "x-events": {kind.value: ref(model) for kind, model in EVENTS.items()},
                            }
                        },
                    },
                    "400": error("Last-Event-ID is not an id this stream sent (`bad_request`)."),
                    **READ_ERRORS,
                    "404": error("Unknown or expired job, or another API key's (`not_found`)."),
                    "429": error(
                        "Rate limit exceeded (`rate_limited`), or the client (API key, or address) holds "
                        "TRANSQ_EVENT_STREAMS_PER_KEY streams open already (`too_many_streams`).",
                        retry_after=True,
                    ),
                },
            }
        }
    }
