"""Which route serves a request's language pair: the routes workers have announced (and the API's own
configured model), with live worker counts from their heartbeats, re-read every two seconds."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from shared.contract import LanguagePair
from shared.errors import UnsupportedLanguagePair
from shared.routing.routes import Route
from shared.store.workers import WorkerRegistry

REFRESH_SECONDS = 2.0


@dataclass
class Pair:
    source: str
    target: str
    routes: list[Route] = field(default_factory=list)
    workers: dict[str, int] = field(default_factory=dict)  # route key -> live workers

    def view(self) -> LanguagePair:
        """The pair as GET /v1/languages shows it."""
        return LanguagePair(
            source_lang=self.source,
            target_lang=self.target,
            models=sorted({r.model for r in self.routes}),
            workers=sum(self.workers.get(r.key, 0) for r in self.routes),
        )


class RouteTable:
    def __init__(self, registry: WorkerRegistry, default: Route, default_pair: str = ""):
        self.registry = registry
        self.default = default
        self.default_pair = default_pair  # "zh-en": where a request naming no language goes
        self._pairs: dict[str, Pair] = {}
        self._namespaces: dict[str, str | None] = {}
        self._read_at = float("-inf")
        self.decoding: dict[str, int] = {}  # live workers by decoding loop ("transq", or "generate": a fallback)

    def pairs(self) -> dict[str, Pair]:
        """Served pairs by name ("zh-en"), each with its routes and live workers."""
        if time.monotonic() - self._read_at > REFRESH_SECONDS:
            routes = {self.default.key: self.default, **{r.key: r for r in self.registry.routes()}}
            workers: dict[str, int] = {}
            decoding: dict[str, int] = {}
            for info in self.registry.live_workers():
                workers[info.get("route", "")] = workers.get(info.get("route", ""), 0) + 1
                decoding[info.get("decoding", "unknown")] = decoding.get(info.get("decoding", "unknown"), 0) + 1
            self.decoding = decoding
            pairs: dict[str, Pair] = {}
            for route in routes.values():
                pair = pairs.setdefault(route.pair, Pair(route.source, route.target))
                pair.routes.append(route)
                pair.workers[route.key] = workers.get(route.key, 0)
            self._pairs, self._namespaces, self._read_at = pairs, {}, time.monotonic()
        return self._pairs

    def choose(self, source: str | None, target: str | None) -> Route:
        """The route for a request: the served pair it names (either field may be left out when that
        leaves one pair; both when the default pair is served), then of its routes the one with the most
        live workers, the API's own first."""
        pairs = self.pairs()
        matching = [
            p
            for p in pairs.values()
            if (source is None or p.source == source) and (target is None or p.target == target)
        ]
        if len(matching) > 1 and source is None and target is None and self.default_pair in pairs:
            matching = [pairs[self.default_pair]]
        if len(matching) != 1:
            served = ", ".join(sorted(pairs))
            if not matching:
                if source is None:
                    asked = f"into {target} (source_lang was not given)"
                elif target is None:
                    asked = f"from {source} (target_lang was not given)"
                else:
                    asked = f"{source} to {target}"
                raise UnsupportedLanguagePair(f"no model translates {asked}; served pairs: {served}")
            raise UnsupportedLanguagePair(f"give source_lang and target_lang; served pairs: {served}")
        pair = matching[0]
        return max(pair.routes, key=lambda r: (pair.workers[r.key], r.key == self.default.key, r.key))

    def cache_namespace(self, route_key: str) -> str | None:
        """The sentence cache namespace the route's workers publish (remembered until the next refresh)."""
        self.pairs()  # refreshed when stale, and the namespaces forgotten with it
        if route_key not in self._namespaces:
            self._namespaces[route_key] = self.registry.cache_namespace(route_key)
        return self._namespaces[route_key]
