"""A pydantic ValidationError in the project's words: the first fault, naming its field (`texts[3] is empty`)."""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails

# pydantic's own error types, as transq words them; the contract's own checks word theirs (fields.refused).
_WORDS = {
    "missing": "{field} is required",
    "string_type": "{field} must be a string",
    "list_type": "{field} must be a list of strings",
    "too_short": "{field} must not be empty",
    "model_type": "the body must be a JSON object",
    "model_attributes_type": "the body must be a JSON object",
    "extra_forbidden": "unknown field `{field}`",
    "string_too_long": "{field} is too long",
}


def field_name(loc: tuple[int | str, ...]) -> str:
    """("texts", 3) -> "texts[3]"."""
    name = ""
    for part in loc:
        name += f"[{part}]" if isinstance(part, int) else f"{'.' if name else ''}{part}"
    return name


def refusal(error: ValidationError) -> str:
    """The message of the request's first fault."""
    first: ErrorDetails = error.errors(include_url=False)[0]
    field, message = field_name(first["loc"]), first["msg"]
    if "{field}" in message:  # the contract's own check (fields.refused)
        return message.replace("{field}", field)
    if first["type"] in _WORDS:
        return _WORDS[first["type"]].format(field=field)
    return f"{field}: {message}" if field else message
