"""What an operator puts in place of the committed placeholders (docs/deployment.md, "Secrets")."""

from __future__ import annotations

from urllib.parse import urlsplit

from shared.settings.checks import PLACEHOLDER

REAL_PASSWORD = "3b1f0c9d8e7a6b5c4d3e2f1a0b9c8d7e"


def filled(env: dict[str, str]) -> dict[str, str]:
    """The environment with an API key and a real password wherever a placeholder (or nothing) stood."""
    out = dict(env)
    out["TRANSQ_API_KEYS"] = env.get("TRANSQ_API_KEYS") or "k-0123456789abcdef0123456789abcdef"
    for name in ("TRANSQ_REDIS_URL", "TRANSQ_CACHE_URL"):
        url = urlsplit(env.get(name, ""))
        if url.password and PLACEHOLDER.search(url.password):
            out[name] = url._replace(netloc=url.netloc.replace(f":{url.password}@", f":{REAL_PASSWORD}@")).geturl()
    if PLACEHOLDER.search(env.get("REDIS_PASSWORD", "")):
        out["REDIS_PASSWORD"] = REAL_PASSWORD
    return out
