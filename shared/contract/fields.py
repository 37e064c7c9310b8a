"""The field types the requests are made of, each with its check and its JSON Schema in one place."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StrictFloat,
    StrictStr,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from shared.callback_policy import MAX_URL_CHARS, CallbackRefused, check_callback_url
from shared.text.glossary import Glossary, GlossaryError

# A text must hold a character outside this class: whitespace by Python's rules and by JSON Schema's
# (ECMA-262) rules together, spelt the same in both languages, so /openapi.json's `pattern` and this
# check agree on every string (Python alone also counts \x1c-\x1f and \x85; ECMA alone \ufeff).
NOT_BLANK = "[^\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
_NOT_BLANK = re.compile(NOT_BLANK)
# A glossary term: starts and ends with a character that is neither whitespace nor a control character, and
# holds no control character but whitespace (shared.text.glossary's rule, spelt for /openapi.json).
_CONTROL = "\\x00-\\x08\\x0e-\\x1b\\x7f-\\x84\\x86-\\x9f"
_TERM_EDGE = NOT_BLANK[:-1] + _CONTROL + "]"
GLOSSARY_TERM = f"^{_TERM_EDGE}([^{_CONTROL}]*{_TERM_EDGE})?$"


def refused(kind: str, message: str, **context: Any) -> PydanticCustomError:
    """A refusal in the project's words; `{field}` in `message` becomes the field's name (shared.contract.refusals)."""
    return PydanticCustomError(kind, message, context or None)


def _a_text(value: str) -> str:
    if not _NOT_BLANK.search(value):
        raise refused("blank", "{field} is empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise refused("surrogate", "{field} contains a lone surrogate, which is not valid Unicode text") from None
    return value


def _none_passes(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """JSON null is the same as leaving the field out."""
    return None if value is None else handler(value)


def _a_callback_url(value: str, info: ValidationInfo) -> str:
    """A URL the SSRF policy lets transq call (shared.callback_policy), checked with the settings given as
    the validation context; no settings, no callback."""
    try:
        if info.context is None:
            raise CallbackRefused("callback_url is not taken here")
        check_callback_url(value, info.context)
    except CallbackRefused as exc:
        raise refused("callback", str(exc).replace("callback_url", "{field}", 1)) from None
    return value


def _glossary_terms(value: Any, info: ValidationInfo) -> Any:
    """Source term -> target term within TRANSQ_GLOSSARY_MAX_TERMS and _MAX_TERM_CHARS (shared.text.glossary)."""
    if value is None:
        return None
    name = str(info.field_name)
    try:
        return Glossary.parse(value, info.context, name).as_dict()
    except GlossaryError as exc:
        raise refused("glossary", str(exc).replace(name, "{field}", 1)) from None


def _language(value: str) -> str | None:
    return value.strip().lower() or None


# One text to translate: a string with something besides whitespace, valid Unicode.
Text = Annotated[StrictStr, AfterValidator(_a_text), Field(json_schema_extra={"minLength": 1, "pattern": NOT_BLANK})]
# A language code, lower case; null or blank: not given.
Language = Annotated[StrictStr, AfterValidator(_language), WrapValidator(_none_passes)]
# A number, or null: not given (its bounds are checked where it is declared).
Seconds = Annotated[StrictFloat, WrapValidator(_none_passes)]
# Where to POST the job's view once it is final: an https URL the callback policy allows; null: none.
CallbackUrl = Annotated[
    StrictStr,
    AfterValidator(_a_callback_url),
    WrapValidator(_none_passes),
    Field(json_schema_extra={"format": "uri", "maxLength": MAX_URL_CHARS}),
]
# A glossary: source term -> target term (the source itself: keep it as written).
GlossaryTerms = Annotated[
    dict[str, str],
    BeforeValidator(_glossary_terms),
    Field(
        description="Source term -> target term; a term that maps to itself is kept as written (do not translate). "
        "Latin-script terms match at word boundaries, case counts (a lower-case term also matches with a capital "
        "first letter), the longest term first; the target appears verbatim in the translation.",
        examples=[{"北京": "Beijing", "GitHub": "GitHub"}],
        json_schema_extra={
            "propertyNames": {"pattern": GLOSSARY_TERM},
            "additionalProperties": {"type": "string", "pattern": GLOSSARY_TERM},
        },
    ),
]
GLOSSARY_ID_PATTERN = "^[0-9a-f]{32}$"


def confidence_value(value: Any, text: bool) -> float | None:
    """A quality gate's min_confidence (shared.contract.requests.QualityGateOptions): a finite number in
    CONFIDENCE_RANGE; `text`: it may come as text (a form field or query parameter)."""
    from shared.settings.checks import CONFIDENCE_RANGE

    low, high = CONFIDENCE_RANGE
    if value is None:
        return None
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if isinstance(value, str) and text:
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not low <= number <= high:  # NaN and the infinities too
        raise refused("confidence", "{field} must be a number from {low} to {high}", low=f"{low:g}", high=f"{high:g}")
    return float(number)
