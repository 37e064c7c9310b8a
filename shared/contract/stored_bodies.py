"""The bodies that store something for later jobs: a glossary (POST /v1/glossaries) and a person's corrections
of a job's sentences, for a translation memory (POST /v1/jobs/{job_id}/corrections)."""

from __future__ import annotations

from pydantic import ConfigDict, Field, field_validator

from shared.contract.fields import GlossaryTerms, Text, refused
from shared.contract.requests import Body


class GlossaryBody(Body):
    """POST /v1/glossaries: a glossary to store."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("", max_length=100)
    terms: GlossaryTerms = Field(json_schema_extra={"minProperties": 1})

    @field_validator("terms")
    @classmethod
    def _not_empty(cls, terms: dict[str, str]) -> dict[str, str]:
        if not terms:
            raise refused("empty", "{field} must not be empty")
        return terms


class CorrectionsBody(Body):
    """POST /v1/jobs/{job_id}/corrections: a job's sentences as a person corrected them, for a memory."""

    model_config = ConfigDict(extra="forbid")

    translation_memory: str = Field(pattern=r"^[0-9a-f]{32}$", description="The memory (of this API key) they go to.")
    corrections: dict[str, Text] = Field(
        json_schema_extra={"minProperties": 1, "propertyNames": {"pattern": "^[0-9]+$"}},
        description="Sentence index in the job (all texts together, as `suggestions` and `warnings` count) -> its "
        "corrected translation.",
    )

    @field_validator("corrections")
    @classmethod
    def _indices(cls, corrections: dict[str, str]) -> dict[str, str]:
        if not corrections:
            raise refused("empty", "{field} must not be empty")
        for key in corrections:
            if not key.isascii() or not key.isdigit():
                raise refused("index", "{field} keys must be sentence indices (0, 1, ...), not {key}", key=repr(key))
        return corrections
