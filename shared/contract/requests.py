"""The request bodies: what each call takes, its checks and its schema in one model per body.

Limits that come from the settings (how many texts, the longest wait) are checked with the settings
passed as the validation context (`Model.model_validate(body, context=settings)`); /openapi.json states
them from the same settings (api.openapi). A new request field is one line in the model that takes it.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationInfo, field_validator, model_validator

from shared.contract.fields import (
    GLOSSARY_ID_PATTERN,
    CallbackUrl,
    GlossaryTerms,
    Language,
    Seconds,
    Text,
    confidence_value,
    refused,
)
from shared.document_formats import FORMATS, TEXT_FORMATS
from shared.settings.checks import CONFIDENCE_RANGE

# What a multipart form's own fields (format, languages, boundaries) may add to TRANSQ_MAX_DOCUMENT_BYTES.
FORM_FIELDS_BYTES = 65536

_REFUSED = {
    "format": f"{{field}} must be one of {', '.join(TEXT_FORMATS)} (a .docx, .xlsx, .pptx, .odt, .po, .xlf or .epub file goes to /v1/documents)",
    "glossary_id": "{field} must be the id of a stored glossary (32 hex digits)",
    "scores": "{field} must be true or false",
    "on_low_confidence": '{field} must be "flag" or "withhold"',
    "translation_memory": "{field} must be the id of a stored translation memory (32 hex digits) or a list of 1 to "
    "TRANSQ_MEMORY_MAX_PER_JOB of them",
    "retranslate": "{field} must be true or false",
}
_MEMORY_ID = re.compile(r"[0-9a-f]{32}")
MemoryId = Annotated[str, Field(pattern=f"^{_MEMORY_ID.pattern}$")]


def _in_our_words(cls: type, value: Any, handler: Any, info: ValidationInfo) -> Any:
    """A field's refusal in _REFUSED's words rather than pydantic's (a wrap validator of the fields named)."""
    try:
        return handler(value)
    except ValueError:
        raise refused(str(info.field_name), _REFUSED[str(info.field_name)]) from None


class Body(BaseModel):
    """A request body: unknown fields are ignored, as they always were."""

    model_config = ConfigDict(extra="ignore")


class Languages(Body):
    source_lang: Language = Field(
        None,
        description="Optional when one pair fits the other field (GET /v1/languages lists the served pairs); "
        '"auto": detected from the texts (POST /v1/detect says what it would detect).',
    )
    target_lang: Language = None
    callback_url: CallbackUrl = Field(
        None,
        description="POSTed the job's view, signed, once it is final (https; docs/api.md, Completion callbacks).",
    )


class Texts(Body):
    """Exactly one of `text` and `texts`."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"required": ["texts"], "not": {"required": ["text"]}},
                {"required": ["text"], "not": {"required": ["texts"]}},
            ]
        }
    )

    text: Text = None
    texts: Annotated[list[Text], Field(min_length=1)] = None

    @model_validator(mode="before")
    @classmethod
    def _one_of_text_and_texts(cls, body: Any) -> Any:
        if isinstance(body, dict) and ("text" in body) == ("texts" in body):
            raise refused("one_of", "give exactly one of `text` (a string) or `texts` (a list of strings)")
        return body

    @field_validator("texts", mode="before")
    @classmethod
    def _at_most_max_texts(cls, texts: Any, info: ValidationInfo) -> Any:
        limit = info.context.max_texts
        if isinstance(texts, list) and len(texts) > limit:
            raise refused(
                "too_many", "{field} has {count} items; at most {limit} are allowed", count=len(texts), limit=limit
            )
        return texts

    @property
    def items(self) -> list[str]:
        return [self.text] if self.text is not None else self.texts or []


class QualityGateOptions(Body):
    """A job's quality gate (docs/api.md, Quality gate); `form_fields`: its values come as text (a form)."""

    form_fields: ClassVar[bool] = False
    min_confidence: float = Field(
        None,
        json_schema_extra={"minimum": CONFIDENCE_RANGE[0], "maximum": CONFIDENCE_RANGE[1]},
        description="A confidence (a mean log-probability, 0 best) under which a sentence is made again with a "
        "wider beam, then flagged or withheld; default TRANSQ_MIN_CONFIDENCE (off unless set).",
    )
    on_low_confidence: Literal["flag", "withhold"] = Field(
        "flag", description='A sentence still under it: "flag" it `low_confidence`, or "withhold" (its source).'
    )
    _a_confidence = field_validator("min_confidence", mode="before")(
        lambda cls, v: confidence_value(v, cls.form_fields)
    )
    _gate_in_our_words = field_validator("on_low_confidence", mode="wrap")(_in_our_words)


class DetectRequest(Texts):
    """POST /v1/detect: the texts whose language to detect."""


class JobRequest(Texts, Languages, QualityGateOptions):
    """POST /v1/jobs: exactly one of `text` and `texts`."""

    glossary: GlossaryTerms = None  # type: ignore[assignment]
    glossary_id: str = Field(
        None,
        pattern=GLOSSARY_ID_PATTERN,
        description="A stored glossary of this API key (POST /v1/glossaries); `glossary` terms are added to it and "
        "win where both have a term.",
    )

    format: Literal[TEXT_FORMATS] = Field(  # type: ignore[valid-type]
        "text",
        description="What each text is: plain text, or an HTML, Markdown or SubRip document whose markup, code "
        "and timings come back untouched (only its text is translated). Word files: POST /v1/documents.",
    )
    scores: StrictBool = Field(
        False,
        description="Also return each translated sentence's confidence (`result.scores`: the decoder's "
        "length-normalised log-probability of its output, 0 best) and the job's `confidence` summary.",
    )

    translation_memory: MemoryId | Annotated[list[MemoryId], Field(min_length=1)] = Field(
        None,
        description="A translation memory of this API key (POST /v1/memories), or a list of them (the first "
        "holding a sentence wins): a sentence it holds exactly is answered from it (`from_memory`), one it holds "
        "a fuzzy match of is translated and carries the match in `suggestions`. Plain text jobs only.",
    )
    translation_memory_threshold: int = Field(
        75, ge=0, le=100, description="The lowest fuzzy match score (0-100) made a suggestion; 100: exact only."
    )

    _in_our_words = field_validator("format", "glossary_id", mode="wrap")(_in_our_words)

    @field_validator("translation_memory_threshold", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        """true is not 1 (pydantic's lax integers take it): a threshold is a number from 0 to 100."""
        if isinstance(value, bool):
            raise refused("threshold", "{field} must be a whole number from 0 to 100, not true or false")
        return value

    @field_validator("translation_memory", mode="wrap")
    @classmethod
    def _memory_ids(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        """A list of 1 to TRANSQ_MEMORY_MAX_PER_JOB memory ids (one id: a list of one)."""
        try:
            ids = handler(value)
        except ValueError:
            ids = [""]
        ids = [ids] if isinstance(ids, str) else ids
        limit = info.context.memory_max_per_job
        if ids is not None and not (1 <= len(ids) <= limit and all(_MEMORY_ID.fullmatch(i) for i in ids)):
            raise refused(
                "translation_memory", _REFUSED["translation_memory"].replace("TRANSQ_MEMORY_MAX_PER_JOB", str(limit))
            )
        return ids


class TranslateRequest(JobRequest):
    """POST /v1/translate: a job, and how long to wait for it."""

    timeout: Seconds = Field(None, ge=0, description="Seconds to wait; TRANSQ_WAIT_TIMEOUT at most.")

    @field_validator("timeout", mode="wrap")
    @classmethod
    def _within_the_wait_timeout(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        limit = info.context.wait_timeout
        try:
            seconds = handler(value)
        except ValueError:
            seconds = -1.0
        if seconds is not None and not 0 <= seconds <= limit:
            raise refused("timeout", "{field} must be a number of seconds from 0 to {limit}", limit=f"{limit:g}")
        return seconds


class LegacyRequest(Body):
    """POST /api/translate, the call of the single-process services transq replaces: one text."""

    text: Text

    @property
    def items(self) -> list[str]:
        return [self.text]


class DocumentOptions(Languages, QualityGateOptions):
    """What a document upload may ask for besides its file (form fields, or query parameters with a bare
    body): its languages, a glossary (as JSON text), a stored glossary, scores, and for a translator's file
    whether its translated units are translated again."""

    glossary: GlossaryTerms = Field(  # type: ignore[assignment]
        None, json_schema_extra={"contentMediaType": "application/json"}, description="As a job's, as JSON text."
    )
    glossary_id: str = Field(None, pattern=GLOSSARY_ID_PATTERN, description="As a job's.")
    form_fields: ClassVar[bool] = True
    scores: bool = Field(
        False,
        description="`true`: the job's `result.scores` holds each document's sentences' confidences, in order.",
    )
    retranslate: bool = Field(
        False,
        description="A PO or XLIFF file only: `true` translates every unit, the already translated ones too "
        "(by default those are kept as they are).",
    )

    @field_validator("glossary", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except ValueError:
            raise refused("json", "{field} must be a JSON object of terms") from None

    _in_our_words = field_validator("glossary_id", "scores", "retranslate", mode="wrap")(_in_our_words)


class DocumentForm(DocumentOptions):
    """POST /v1/documents as a multipart form: the file and what to do with it."""

    file: bytes = Field(description="The document.")
    format: Literal[FORMATS] = None  # type: ignore[valid-type]
