"""A job's completion callback as its record holds it.

The record's fields: `callback_url` (written at creation: shared.store.job_record.Job), then, once the job is
final, its delivery (Delivery, read with the rest of the record; only scripts write it): `callback_state`
(pending, delivered or failed; set to pending by the script that makes the job final, shared.store.job_scripts
OUTBOX), `callback_since` (Redis time, s, when it became due; not read), `callback_attempts`,
`callback_last_status` (the receiver's last HTTP status) and `callback_last_error` (what went wrong last),
written by the deliverer (worker.callbacks.outbox)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from shared.store.record_codec import stored


class DeliveryState(StrEnum):
    PENDING = "pending"  # not final yet, or final and not yet delivered: attempts go on
    DELIVERED = "delivered"  # a receiver answered 2xx
    FAILED = "failed"  # refused at delivery (SSRF policy), or no 2xx within TRANSQ_CALLBACK_DEADLINE


@dataclass(frozen=True)
class Delivery:
    """How a job's callback delivery stands (a job just made, or not yet final: pending, no attempt)."""

    state: DeliveryState = stored(name="callback_state", default=DeliveryState.PENDING)
    attempts: int = stored(name="callback_attempts", default=0)
    last_status: int | None = stored(name="callback_last_status", default=None)
    last_error: str | None = stored(name="callback_last_error", default=None)
