"""Characters per API key: GET /v1/usage (the caller's own), and the charge a submission makes first.

What counts and how is in shared.store.quota: every character a job asks for, cached or not, charged before the
job is written and refunded when it is not written after all."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from flask import Blueprint

from api.auth import client_id
from api.current import services
from shared.contract import Usage
from shared.errors import QuotaExceeded
from shared.store.quota import CharacterQuota, PeriodUsage

bp = Blueprint("usage", __name__)


@dataclass
class Charge:
    """A submission's characters, counted against its client's quota; `refund()` when its job is not
    written after all (counted at one instant, so a refund lands in the same day and month)."""

    quota: CharacterQuota
    client: str
    characters: int
    cached: int
    at: datetime

    def refund(self) -> None:
        self.quota.refund(self.client, self.characters, self.cached, self.at)

    def noted(self, layout: str) -> str:
        """A document job's layout (JSON) noting this charge of its upload, which the document stage settles
        to the characters it parses (worker.documents.stage_quota)."""
        note = {"client": self.client, "characters": self.characters, "at": self.at.isoformat()}
        return json.dumps({**json.loads(layout), "quota": note}, ensure_ascii=False)


def charge(quota: CharacterQuota, client: str, characters: int, cached: int) -> Charge:
    """Count a submission, or raise 429 quota_exceeded naming the limit and when it resets."""
    at = datetime.now(timezone.utc)
    refused = quota.charge(client, characters, cached, at)
    if refused is not None:
        raise QuotaExceeded(refused.message(f"this request's {characters} characters"), retry_after=refused.retry_after)
    return Charge(quota, client, characters, cached, at)


@bp.get("/v1/usage")
def usage():  # type: ignore[no-untyped-def]
    """The caller's characters, cached share and jobs, this UTC day and month and the last ones."""
    who = client_id()
    periods = services().quota.usage(who)
    return Usage(client=who, **{period: _periods(found) for period, found in periods.items()}).model_dump()


def _periods(found: list[PeriodUsage]) -> dict[str, Any]:
    current, last = found
    return {"current": _period(current), "last": _period(last)}


def _period(usage: PeriodUsage) -> dict[str, Any]:
    return {
        "start": _iso(usage.start),
        "resets_at": _iso(usage.resets_at),
        "characters": usage.characters,
        "cached_characters": usage.cached_characters,
        "cached_share": round(usage.cached_characters / usage.characters, 4) if usage.characters else 0.0,
        "jobs": usage.jobs,
        "limit": usage.limit or None,
        "remaining": max(0, usage.limit - usage.characters) if usage.limit else None,
    }


def _iso(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
