"""A job's completion callback as its record holds it, and as its view shows it.

The record's fields: `callback_url` (written at creation), then, once the job is final, `callback_state`
(pending, delivered or failed; set to pending by the script that makes the job final, shared.store.job_scripts
OUTBOX), `callback_since` (Redis time, s, when it became due), `callback_attempts`, `callback_last_status`
(the receiver's last HTTP status) and `callback_last_error` (what went wrong last), written by the
deliverer (worker.callbacks.outbox)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

# The record's fields the job view reads (shared.store.jobs reads them with the rest of the record).
CALLBACK_FIELDS = ("callback_state", "callback_attempts", "callback_last_status", "callback_last_error")


class DeliveryState(StrEnum):
    PENDING = "pending"  # not final yet, or final and not yet delivered: attempts go on
    DELIVERED = "delivered"  # a receiver answered 2xx
    FAILED = "failed"  # refused at delivery (SSRF policy), or no 2xx within TRANSQ_CALLBACK_DEADLINE


def delivery_state(record: dict[str, str]) -> dict[str, Any]:
    """The delivery of a job's callback from its record's fields; {} for a job without a callback."""
    if not record.get("callback_url"):
        return {}
    status = record.get("callback_last_status")
    return {
        "state": record.get("callback_state") or DeliveryState.PENDING.value,
        "attempts": int(record.get("callback_attempts") or 0),
        "last_status": int(status) if status else None,
        "last_error": record.get("callback_last_error") or None,
    }


def callback_view(callback_url: str, delivery: dict[str, Any]) -> dict[str, Any] | None:
    """The job view's `callback` part (None: the job has no callback):
    {"url", "state", "attempts", "last_status", "last_error"}."""
    if not callback_url:
        return None
    return {"url": callback_url, **delivery}
