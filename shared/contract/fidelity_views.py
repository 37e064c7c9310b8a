"""What the job view shows of its sentences' fidelity records and its quality gate (shared.text.fidelity; docs/api.md,
"Fidelity" and "Quality gate")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.text.fidelity import FLAGS


class _View(BaseModel):
    model_config = ConfigDict(use_enum_values=True)  # as shared.contract.views.View


class SentenceFidelity(_View):
    """What the fidelity check found in one sentence's translation; empty fields are left out."""

    kept: int = Field(None, ge=0, description="Protected spans (numbers, dates, URLs, ...) found as in the source.")
    repaired: int = Field(
        None, ge=0, description="Of those, put back verbatim because the model lost their placeholders."
    )
    flags: list[Literal[FLAGS]] = Field(  # type: ignore[valid-type]
        None,
        description="span_missing, span_repeated (a protected span not there exactly as often as in the source), "
        "untranslated (source-script text left, e.g. Han in English), degenerate (still looping after the output "
        "guard's retry), low_confidence (under the job's min_confidence after a retry with a wider beam).",
    )
    retried: list[Literal["degenerate", "low_confidence"]] = Field(
        None, description="Why it was made again: the output guard, or the quality gate's wider beam."
    )
    withheld: bool = Field(None, description='`on_low_confidence: "withhold"`: the source is returned untranslated.')


class Fidelity(_View):
    """A job's fidelity records in brief."""

    sentences: int = Field(ge=0, description="Sentences checked.")
    kept: int = Field(ge=0)
    repaired: int = Field(ge=0)
    flagged: int = Field(ge=0, description="Sentences with a flag.")
    flags: dict[str, int] = Field(description="Sentences per flag (those with none left out).")


class QualityGate(_View):
    """What the quality gate did to a job (one with a min_confidence, its own or TRANSQ_MIN_CONFIDENCE)."""

    min_confidence: float
    retried: int = Field(ge=0, description="Sentences under it made again with a wider beam.")
    low_confidence: int = Field(ge=0, description="Sentences still under it (flagged `low_confidence`).")
    withheld: int = Field(ge=0, description="Of those, returned untranslated.")
