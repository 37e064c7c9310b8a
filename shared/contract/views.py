"""The response bodies: the job view, errors, the served languages, the waiting calls' answers, health."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.contract.fidelity_views import Fidelity, QualityGate, SentenceFidelity
from shared.document_formats import FORMATS
from shared.errors import ErrorCode
from shared.store.job_record import JOB_ID_PATTERN
from shared.store.job_status import JobStatus


class View(BaseModel):
    model_config = ConfigDict(use_enum_values=True)


class ErrorDetail(View):
    code: str = Field(examples=[ErrorCode.VALIDATION_ERROR.value])
    message: str = Field(examples=["texts[3] is empty"])


class ErrorBody(View):
    """Every error the API answers: {"error": {"code", "message"}}."""

    error: ErrorDetail


class Progress(View):
    sentences_done: int
    sentences_total: int


class JobWarning(View):
    model_config = ConfigDict(extra="allow")

    code: str
    message: str
    sentence: int


class DocumentLink(View):
    """A document job's file name and where its translation is downloaded."""

    filename: str | None
    download: str


class JobResult(View):
    """One translation per text (for a document job: the translated documents; a Word file's is downloaded
    from `document_url`)."""

    translations: list[str] = None  # type: ignore[assignment]
    document_url: str = None  # type: ignore[assignment]
    scores: list[list[float | None]] = Field(
        None,
        description='With `"scores": true`: per text, its translated sentences\' confidences in order (the '
        "decoder's length-normalised log-probability, 0 best; null for a sentence without one: cached before "
        "scores were kept, made again by the output guard, or of a glossary's terms only).",
    )
    fidelity: list[list[SentenceFidelity]] = Field(None, description="Per text, its sentences' fidelity records.")


class Confidence(View):
    """A job's sentence confidences in brief (with `"scores": true`)."""

    mean: float | None = Field(description="Over the sentences that have a score; null when none has.")
    min: float | None
    low: int = Field(ge=0, description="Sentences scored under `threshold`.")
    threshold: float = Field(description="TRANSQ_LOW_CONFIDENCE.")


class Detection(View):
    language: str | None = Field(description="ISO 639-1 (zh, en, ja, fr, ...); null when the text has no letters.")
    confidence: float = Field(ge=0, le=1)


class Detections(View):
    """POST /v1/detect: one detection per text, in order."""

    detections: list[Detection]


class CallbackDelivery(View):
    """A job's completion callback: where it goes and how its delivery stands."""

    url: str
    state: Literal["pending", "delivered", "failed"]
    attempts: int = Field(ge=0)
    last_status: int | None = Field(description="The receiver's last HTTP status.")
    last_error: str | None


class MemoryMatch(View):
    source: str
    target: str
    score: float = Field(ge=0, le=100, description="Normalized Levenshtein similarity of the sources' characters.")


class MemorySuggestions(View):
    sentence: int = Field(ge=0, description="The sentence's index in the job, all texts together.")
    matches: list[MemoryMatch]


class JobView(View):
    """A job as GET /v1/jobs/{job_id} shows it."""

    id: str = Field(pattern=JOB_ID_PATTERN)
    status: JobStatus = Field(
        description="A job goes queued -> running -> succeeded (or failed, cancelled); a document job goes parsing "
        "(the document stage reads it) -> queued -> running -> rendering (the document stage writes the translated "
        "document) -> succeeded."
    )
    created_at: str
    started_at: str | None
    finished_at: str | None
    progress: Progress
    cached_sentences: int
    model: str | None = Field(
        description="The model translating it; null while the document stage has yet to detect a document's language."
    )
    format: Literal[FORMATS]  # type: ignore[valid-type]
    document: DocumentLink = None  # type: ignore[assignment]
    warnings: list[JobWarning] = Field(
        None,
        description="Translations that looped or ran far too long: made again with repeats banned and a length cap "
        "(`degenerate_output`), by sentence index.",
    )
    from_memory: int = Field(
        None, description="With `translation_memory`: sentences answered by a memory's exact match (not the model)."
    )
    suggestions: list[MemorySuggestions] = Field(
        None,
        description="With `translation_memory`: the fuzzy matches of the memories (score at or above "
        "`translation_memory_threshold`) of sentences they hold no exact match of, by sentence index, best first.",
    )
    result: JobResult = None  # type: ignore[assignment]
    detected: Detection = Field(
        None,
        description='With source_lang "auto": the language the texts were detected in (the one of most of their '
        "characters) and the share of characters detected as it, weighted by each text's confidence.",
    )
    callback: CallbackDelivery = None  # type: ignore[assignment]
    confidence: Confidence = None  # type: ignore[assignment]
    fidelity: Fidelity = None  # type: ignore[assignment]
    quality_gate: QualityGate = None  # type: ignore[assignment]
    error: ErrorDetail = Field(
        None,
        description="A failed job's reason: e.g. `invalid_document` (a malformed document), `document_too_complex` "
        "(its parsing or rendering needed more than TRANSQ_DOCUMENT_TIME_LIMIT or TRANSQ_DOCUMENT_MEMORY_MB), "
        "`validation_error` (too many characters or sentences), `quota_exceeded` (a document's text over its "
        "client's daily or monthly characters), `timeout`, `worker_lost`.",
    )


class Translations(View):
    """POST /v1/translate done in time."""

    translations: list[str]
    scores: list[list[float | None]] = Field(None, description="As a job's `result.scores`.")
    confidence: Confidence = None  # type: ignore[assignment]
    fidelity: Fidelity = Field(None, description="As a job's (its sentences' records: GET /v1/jobs/{job_id}).")
    quality_gate: QualityGate = None  # type: ignore[assignment]


class LegacyTranslation(View):
    """POST /api/translate done in time."""

    translation: str
    timestamp: str


class LanguagePair(View):
    source_lang: str
    target_lang: str
    models: list[str]
    workers: int = Field(ge=0)


class ServedLanguages(View):
    """GET /v1/languages: one entry per served pair."""

    pairs: list[LanguagePair]


class Health(View):
    status: Literal["ok"] = "ok"


class Readiness(View):
    """The API can accept jobs (the broker Redis answers), and the workers each served pair has live."""

    status: Literal["ready"] = "ready"
    workers: int = Field(ge=0)
    pairs: dict[str, int] = Field(description="Each served pair's live workers.")
    decoding: dict[str, int] = Field(
        description="Live workers by decoding loop (`generate`: the model's generation config made the worker fall "
        "back to transformers' generate(), at a large cost in throughput)."
    )


class PeriodUsage(View):
    start: str
    resets_at: str
    characters: int = Field(description="Characters submitted, cached or not: every one counts against the limit.")
    cached_characters: int = Field(description="Of those, the ones the sentence cache answered at submission.")
    cached_share: float = Field(ge=0, le=1)
    jobs: int
    limit: int | None = Field(description="TRANSQ_QUOTA_CHARS_PER_DAY or _MONTH, or the key's override; null: none.")
    remaining: int | None


class Periods(View):
    current: PeriodUsage
    last: PeriodUsage


class Usage(View):
    """GET /v1/usage: the caller's own characters (its API key's id, else its address), by UTC period."""

    client: str
    day: Periods
    month: Periods


class GlossarySummary(View):
    """A stored glossary as a listing shows it: everything but its terms."""

    id: str = Field(pattern="^[0-9a-f]{32}$")
    name: str
    term_count: int = Field(ge=0)
    digest: str = Field(description="Stable digest of the terms, whatever their order.")
    created_at: str


class Glossary(GlossarySummary):
    """A stored glossary, with its terms."""

    terms: dict[str, str]


class Glossaries(View):
    """GET /v1/glossaries: the caller's glossaries, oldest first."""

    glossaries: list[GlossarySummary]


class MemorySummary(View):
    """A translation memory as a listing shows it (its entries: GET /v1/memories/{memory_id}, as TMX)."""

    id: str = Field(pattern="^[0-9a-f]{32}$")
    name: str
    source_lang: str
    target_lang: str
    entry_count: int = Field(ge=0)
    bytes: int = Field(ge=0, description="What it counts against TRANSQ_CLIENT_STORAGE_BYTES.")
    created_at: str
    updated_at: str


class ImportedMemory(MemorySummary):
    """POST /v1/memories: the memory stored, and how many units of the file it left out (another pair's)."""

    skipped: int = Field(ge=0)


class Memories(View):
    """GET /v1/memories: the caller's translation memories, oldest first."""

    memories: list[MemorySummary]


class Corrected(View):
    """POST /v1/jobs/{job_id}/corrections: the entries the memory gained and those whose target changed."""

    translation_memory: str
    added: int
    updated: int
