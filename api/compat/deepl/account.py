"""GET /v2/usage (transq's character quota, as DeepL's billing-period usage) and GET /v2/languages."""

from __future__ import annotations

from api.auth import client_id
from api.compat.deepl.params import Params, deepl_code
from api.compat.deepl.shape import blueprint
from api.compat.languages import name_of, served_pairs
from api.current import services
from shared.errors import BadRequest

bp = blueprint("deepl_account")
UNLIMITED = 1_000_000_000_000  # DeepL always states a limit; this is what its own plans without one show


@bp.get("/usage")
def usage():  # type: ignore[no-untyped-def]
    """The characters of the period the caller is limited in: the UTC month (TRANSQ_QUOTA_CHARS_PER_MONTH),
    else the UTC day where only that is limited; the month with no limit at all."""
    periods = services().quota.usage(client_id())
    month, day = periods["month"][0], periods["day"][0]
    period = day if day.limit and not month.limit else month
    limit = period.limit or UNLIMITED
    return {
        "character_count": period.characters,
        "character_limit": limit,
        "start_time": period.start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "end_time": period.resets_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


@bp.get("/languages")
def languages():  # type: ignore[no-untyped-def]
    """?type=source (the default) or target: the served languages, target ones without formality."""
    kind = (Params.of_request().text("type") or "source").lower()
    if kind not in ("source", "target"):
        raise BadRequest("Value for 'type' not supported: source or target.")
    codes = sorted({pair[0] if kind == "source" else pair[1] for pair in served_pairs()})
    listed = [{"language": deepl_code(code), "name": name_of(code)} for code in codes]
    if kind == "target":
        listed = [{**entry, "supports_formality": False} for entry in listed]
    return listed
