"""Settings of translation memories (POST /v1/memories, a job's `translation_memory`): how big an import may be,
how many a client keeps and for how long, and how much fuzzy matching a job may ask for (a part of the one
Settings object, shared.settings)."""

from __future__ import annotations

from dataclasses import dataclass

from shared.settings.environment import setting


@dataclass(frozen=True)
class MemorySettings:
    memory_max_bytes: int = setting(
        16_777_216,
        "Largest translation memory file (TMX, TSV or CSV) POST /v1/memories takes; a larger one gets 413 before "
        "it is parsed.",
    )
    memory_max_entries: int = setting(
        100_000,
        "Most entries (translation units) one translation memory may hold, imported and corrected together; an "
        "import with more gets 422, a correction past it 409.",
    )
    memory_max_entry_chars: int = setting(
        2_000, "Longest source or target segment of a translation memory entry, in characters; a longer one gets 422."
    )
    memory_max_stored: int = setting(
        20, "Most translation memories one API key (or, keys off, one client address) may store."
    )
    memory_max_per_job: int = setting(5, "Most translation memories one job may name (`translation_memory`).")
    memory_ttl: int = setting(
        7_776_000,
        "Seconds a translation memory lives after it was imported, corrected or last used by a job; meanwhile it "
        "counts against its owner's TRANSQ_CLIENT_STORAGE_BYTES.",
    )
    memory_fuzzy_max_sentences: int = setting(
        2_000,
        "Most sentences of one job the worker looks up for fuzzy matches (`suggestions`); the rest get none. Exact "
        "matches are looked up for every sentence.",
    )
