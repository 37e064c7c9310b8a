"""The shared sentence cache: keys that cannot give a wrong answer, one round trip per lookup."""

from __future__ import annotations

import hashlib
import json
import logging
import unicodedata
from typing import Any, Sequence

import redis

from shared.store.keys import Keys

log = logging.getLogger(__name__)

# Bump when normalise() changes: every old entry then misses instead of answering wrongly.
NORMALIZATION_VERSION = 1


def normalise(sentence: str) -> str:
    """Conservative normalisation: NFC, trimmed, runs of whitespace collapsed to one space."""
    return " ".join(unicodedata.normalize("NFC", sentence).split())


def namespace_for(identity: dict[str, Any]) -> str:
    """A short digest of everything that changes a translation except the sentence itself.

    `identity` holds the model's identity and revision and every generation
    setting; the normalisation version is added here.
    """
    payload = json.dumps({**identity, "normalization": NORMALIZATION_VERSION}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def glossary_namespace(namespace: str, glossary_digest: str) -> str:
    """The namespace of translations made with a glossary (shared.text.glossary), derived from the plain one a
    route's workers publish, so the API and the worker name it alike: apart from the plain translations and
    from every other glossary's."""
    return hashlib.sha256(f"{namespace}:glossary:{glossary_digest}".encode()).hexdigest()[:24]


def sentence_digest(sentence: str) -> str:
    return hashlib.sha256(normalise(sentence).encode("utf-8")).hexdigest()


class SentenceCache:
    """Reads and writes cached translations; any Redis failure is a miss, never an error."""

    def __init__(self, client: redis.Redis, keys: Keys, ttl_seconds: int):
        self.client = client
        self.keys = keys
        self.ttl_seconds = ttl_seconds

    def _key(self, namespace: str, sentence: str) -> str:
        return self.keys.cache_entry(namespace, sentence_digest(sentence))

    def _score_key(self, namespace: str, sentence: str) -> str:
        """Where a sentence's confidence (worker.translation.model.confidence) lives beside its translation."""
        return self._key(namespace, sentence) + ":s"

    def get_many(self, namespace: str, sentences: Sequence[str]) -> list[str | None]:
        """Cached translations in order (None for a miss), with one MGET."""
        return self.get_each([namespace] * len(sentences), sentences)

    def get_each(self, namespaces: Sequence[str], sentences: Sequence[str]) -> list[str | None]:
        """As get_many, each sentence in its own namespace (a glossary's, or the plain one)."""
        if not sentences:
            return []
        try:
            return self.client.mget([self._key(ns, s) for ns, s in zip(namespaces, sentences, strict=True)])
        except redis.RedisError as exc:
            log.warning("sentence cache unavailable, treating %d sentences as misses: %s", len(sentences), exc)
            return [None] * len(sentences)

    def scores_each(self, namespaces: Sequence[str], sentences: Sequence[str]) -> list[float | None]:
        """The cached confidences of these sentences, with one MGET (None: none kept, e.g. a translation cached
        before scores were, or made through a glossary's term protection)."""
        if not sentences:
            return []
        try:
            found = self.client.mget([self._score_key(ns, s) for ns, s in zip(namespaces, sentences, strict=True)])
        except redis.RedisError as exc:
            log.warning("sentence cache unavailable, %d scores unknown: %s", len(sentences), exc)
            return [None] * len(sentences)
        return [float(v) if v is not None else None for v in found]

    def put_many(self, namespace: str, translations: dict[str, str], scores: dict[str, float] | None = None) -> bool:
        """Store translations (sentence -> translation), and the `scores` of those that have one, with their
        TTL in one pipelined round trip."""
        if not translations:
            return True
        try:
            pipe = self.client.pipeline(transaction=False)
            for sentence, translation in translations.items():
                pipe.set(self._key(namespace, sentence), translation, ex=self.ttl_seconds)
                if scores and sentence in scores:
                    pipe.set(self._score_key(namespace, sentence), repr(scores[sentence]), ex=self.ttl_seconds)
            pipe.execute()
            return True
        except redis.RedisError as exc:
            log.warning("sentence cache unavailable, %d translations not cached: %s", len(translations), exc)
            return False
