"""Routes: where the jobs of one served model go.

A route is one model with its generation settings: its own Celery queue and its own pending set
(`Keys.queue(route)`, `Keys.pending(route)`), served by the workers started with that model and those
settings, for one language pair. The API sends each job to a route serving the job's pair; a worker
consumes only its route's queue and claims only its route's jobs, so cross-job batching stays within
one model. Two fleets of one model with different beams are two routes, each with its own cache
namespace.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from shared.settings import Settings

# ISO 639-2/3 codes some tokenizer configs use, to the 639-1 codes clients send.
_TWO_LETTER = {
    "zho": "zh",
    "chi": "zh",
    "eng": "en",
    "deu": "de",
    "ger": "de",
    "fra": "fr",
    "fre": "fr",
    "spa": "es",
    "jpn": "ja",
    "rus": "ru",
    "kor": "ko",
    "ita": "it",
    "por": "pt",
    "ara": "ar",
}
_OPUS_NAME = re.compile(r"opus-mt-([a-z]{2,3})-([a-z]{2,3})$")


@dataclass(frozen=True)
class Route:
    key: str  # names the route's queue and pending set: TRANSQ_ROUTE, or "<pair>-<digest of model and settings>"
    model: str
    source: str
    target: str

    @property
    def pair(self) -> str:
        return f"{self.source}-{self.target}"

    def describe(self) -> dict[str, str]:
        return {"route": self.key, "model": self.model, "source": self.source, "target": self.target}


def _code(lang: str) -> str:
    lang = lang.strip().lower()
    return _TWO_LETTER.get(lang, lang)


def language_pair(settings: Settings) -> tuple[str, str]:
    """The pair the model translates: TRANSQ_LANGUAGES; else the model folder's tokenizer config; else an
    opus-mt name (…opus-mt-zh-en); else TRANSQ_SOURCE_LANG and TRANSQ_TARGET_LANG."""
    if settings.languages:
        source, _, target = settings.languages.partition("-")
        return _code(source), _code(target)
    config = Path(settings.model) / "tokenizer_config.json"
    if config.is_file():
        data = json.loads(config.read_text(encoding="utf-8"))
        if data.get("source_lang") and data.get("target_lang"):
            return _code(data["source_lang"]), _code(data["target_lang"])
    match = _OPUS_NAME.search(settings.model.rstrip("/").lower())
    if match:
        return _code(match.group(1)), _code(match.group(2))
    return _code(settings.source_lang), _code(settings.target_lang)


@lru_cache(maxsize=64)
def pair_of(route_key: str) -> tuple[str, str]:
    """The (source, target) languages of a route's key ("zh-en-<digest>"; ("", "") for no route)."""
    source, _, target = route_key.rpartition("-")[0].partition("-")
    return source, target


def route_for(settings: Settings) -> Route:
    """The route of a worker started with `settings` (computed without loading the model): named by
    TRANSQ_ROUTE when it is set (an operator names the keys an autoscaler watches), else by its pair and a
    digest of the model and generation settings (two fleets of one pair with different settings never
    share a queue unless named alike)."""
    source, target = language_pair(settings)
    generation = [
        settings.model,
        settings.num_beams,
        settings.max_new_tokens,
        settings.min_new_tokens,
        settings.max_input_tokens,
        settings.quantize,
        settings.device,
    ]
    digest = hashlib.sha256(json.dumps(generation).encode()).hexdigest()[:10]
    return Route(settings.route or f"{source}-{target}-{digest}", settings.model, source, target)


def main() -> None:
    """`python -m shared.routing.routes`: the route of a worker started with this environment's TRANSQ_* settings,
    and the names an autoscaler reads (KEDA's redis trigger: the pending set; /metrics: the route label)."""
    from shared.store.keys import Keys

    settings = Settings.from_env()
    route = route_for(settings)
    keys = Keys(settings.key_prefix)
    lines = f"route {route.key}\npair {route.pair}\npending {keys.pending(route.key)}\nqueue {keys.queue(route.key)}\n"
    sys.stdout.write(lines)  # a command's output, not a log line


if __name__ == "__main__":
    main()
