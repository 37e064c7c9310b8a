"""The shared sentence cache: keys that cannot give a wrong answer, one round trip per lookup; and the one
lookup of a job's sentences that the API, the document stage and the worker make (SentenceCache.answer)."""

from __future__ import annotations

import hashlib
import json
import logging
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

import redis

from shared.store.keys import Keys
from shared.text.fidelity import check, untranslated_pattern
from shared.text.splitter import Segment, join_translations

if TYPE_CHECKING:
    from shared.text.glossary import Glossary

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


class Question(NamedTuple):
    """What a job asks the cache: its sentences (normalised) in `namespace`, its glossary's terms (their
    sentences are cached under the glossary's own namespace), whether it wants their scores, and its quality
    gate's min_confidence: a cached translation whose score is unknown or under it is a miss, so the sentence
    is translated and goes through the gate (docs/api.md, Quality gate)."""

    namespace: str
    sentences: Sequence[str]
    glossary: Glossary | None = None
    scores: bool = False
    min_confidence: float | None = None


@dataclass(frozen=True)
class CacheAnswer:
    """What the cache holds of a job's sentences: each one's translation (None: a miss), each one's score
    (when asked for), and the namespace each was looked up in."""

    namespaces: list[str]
    translations: list[str | None]
    scores: list[float | None] | None = None

    @property
    def hits(self) -> int:
        return sum(t is not None for t in self.translations)

    @property
    def complete(self) -> bool:
        return self.hits == len(self.translations)

    def texts(self, segments: list[list[Segment]]) -> list[str]:
        """Each text with its translated sentences in place (the answer must be complete)."""
        found = iter(self.translations)
        return [join_translations(segs, [next(found) for s in segs if s.translate]) for segs in segments]  # type: ignore[misc]

    def text_scores(self, segments: list[list[Segment]]) -> list[list[float | None]]:
        """Each text's sentences' scores, in order (None where the cache kept none)."""
        found = iter(self.scores or [None] * len(self.translations))
        return [[next(found) for s in segs if s.translate] for segs in segments]

    def text_fidelity(
        self, segments: list[list[Segment]], sentences: Sequence[str], pair: tuple[str, str], glossary: Glossary | None
    ) -> list[list[dict[str, Any]]]:
        """Each text's sentences' fidelity records (shared.text.fidelity.check: a cached translation is checked as
        a new one is), in order; the answer must be complete."""
        untranslated = untranslated_pattern(*pair)
        allowed = [target for _, target in glossary.terms] if glossary else []
        found = iter([check(s, str(t), untranslated, allowed) for s, t in zip(sentences, self.translations)])
        return [[next(found) for s in segs if s.translate] for segs in segments]


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

    def answer(
        self,
        namespace: str,
        sentences: Sequence[str],
        glossary: Glossary | None = None,
        scores: bool = False,
        min_confidence: float | None = None,
    ) -> CacheAnswer:
        """Each of `sentences` (normalised) looked up in `namespace`, or in its glossary's own where one of the
        glossary's terms matches it (shared.text.glossary); the scores of those found too when `scores`; with
        `min_confidence`, only those whose kept score is not under it (Question)."""
        return self.answers([Question(namespace, sentences, glossary, scores, min_confidence)])[0]

    def answers(self, questions: Sequence[Question]) -> list[CacheAnswer]:
        """The answers of several jobs' questions (a worker's round), each sentence looked up once however
        many of them ask it: one MGET for the translations, one for the scores asked of those found."""
        spaces = [
            q.glossary.cache_namespaces(q.namespace, q.sentences) if q.glossary else [q.namespace] * len(q.sentences)
            for q in questions
        ]
        keys = list(dict.fromkeys(key for q, s in zip(questions, spaces) for key in zip(s, q.sentences)))
        found = dict(zip(keys, self.get_each([k[0] for k in keys], [k[1] for k in keys]))) if keys else {}
        wanted = [
            k
            for q, s in zip(questions, spaces)
            if q.scores or q.min_confidence is not None
            for k in zip(s, q.sentences)
            if found.get(k) is not None
        ]
        wanted = list(dict.fromkeys(wanted))
        scores = dict(zip(wanted, self.scores_each([k[0] for k in wanted], [k[1] for k in wanted]))) if wanted else {}
        answers = []
        for q, s in zip(questions, spaces):
            keys = list(zip(s, q.sentences))
            if q.min_confidence is not None:  # a translation not known to pass the gate is a miss
                passed = [(score := scores.get(k)) is not None and score >= q.min_confidence for k in keys]
                keys = [k if ok else ("", "") for k, ok in zip(keys, passed)]
            answers.append(
                CacheAnswer(s, [found.get(k) for k in keys], [scores.get(k) for k in keys] if q.scores else None)
            )
        return answers

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
