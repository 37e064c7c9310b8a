"""A DeepL request's parameters: a form-encoded or JSON body (DeepL takes both; a form may repeat `text`),
or the query string; its language codes as transq's; the parameters transq cannot honour refused as DeepL
refuses what a language or plan does not support, never silently dropped."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from flask import request

from api.current import services
from api.validation import read_body, read_json_object
from shared.errors import BadRequest, UnsupportedMediaType

# DeepL parameters transq has no equivalent of: refused (400) rather than ignored, since ignoring them would
# give a different translation from the one asked for without saying so.
UNSUPPORTED = ("ignore_tags", "custom_instructions", "style_id", "glossary_ids")
# Parameters DeepL takes as lists (a form repeats them, JSON gives an array); any other given twice, or as an
# array, is refused: which value was meant would be a guess.
LISTS = ("text", "ignore_tags", "splitting_tags", "non_splitting_tags", "glossary_ids")
_FORMALITY = ("default", "prefer_more", "prefer_less")  # "more"/"less": DeepL's 400 for a target without it
_SPLIT = ("0", "1", "nonewlines")
_MODEL_TYPES = ("latency_optimized", "prefer_quality_optimized", "prefer_latency_optimized")


class Params:
    """The parameters, each a list of its values (a form may repeat one)."""

    def __init__(self, values: dict[str, list[Any]]):
        self.values = values

    @classmethod
    def of_request(cls) -> Params:
        """The body's parameters (JSON or form-encoded), over the query string's; within TRANSQ_MAX_BODY_BYTES."""
        settings = services().settings
        values: dict[str, list[Any]] = {key: request.args.getlist(key) for key in request.args}
        mimetype = request.mimetype or ""
        if mimetype == "application/json" or mimetype.endswith("+json"):
            body = read_json_object(request, settings)
            values.update(
                {key: value if key in LISTS and isinstance(value, list) else [value] for key, value in body.items()}
            )
            return cls(values)
        raw = read_body(request, settings.max_body_bytes, settings.request_timeout)
        if raw.strip():
            if mimetype not in ("application/x-www-form-urlencoded", ""):
                raise UnsupportedMediaType("the body must be application/x-www-form-urlencoded or application/json")
            try:
                values.update(parse_qs(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False))
            except UnicodeDecodeError:
                raise BadRequest("the body is not valid UTF-8") from None
        return cls(values)

    def one(self, name: str) -> Any:
        """The parameter's value; None when not given; 400 when a form gives it more than once."""
        found = self.values.get(name)
        if found and len(found) > 1 and name not in LISTS:
            raise BadRequest(f"Parameter '{name}' is given more than once.")
        return found[-1] if found else None

    def text(self, name: str, required: bool = False) -> str | None:
        value = self.one(name)
        if value is None or value == "":
            if required:
                raise BadRequest(f"Parameter '{name}' not specified.")
            return None
        if not isinstance(value, str):
            raise BadRequest(f"Value for '{name}' not supported.")
        return value

    def texts(self) -> list[str]:
        found = self.values.get("text")
        if not found:
            raise BadRequest("Parameter 'text' not specified.")
        if not all(isinstance(item, str) for item in found):
            raise BadRequest("Value for 'text' not supported: it must be a string or a list of strings.")
        return found

    def flag(self, name: str) -> bool | None:
        """A boolean parameter as DeepL takes it: "0"/"1", "true"/"false" or a JSON boolean."""
        value = self.one(name)
        if value is None:
            return None
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("1", "true"):
            return True
        if str(value).lower() in ("0", "false"):
            return False
        raise BadRequest(f"Value for '{name}' not supported.")

    def check_supported(self) -> None:
        """400 for a parameter transq cannot honour, or a value of one it can only partly honour."""
        for name in UNSUPPORTED:
            if self.values.get(name) not in (None, [], [""], [None], [[]]):
                raise BadRequest(f"Parameter '{name}' is not supported by this server.")
        checks = (("formality", _FORMALITY), ("split_sentences", _SPLIT), ("model_type", _MODEL_TYPES))
        for name, allowed in checks:
            value = self.one(name)
            if value is not None and str(value).lower() not in allowed:
                raise BadRequest(f"Value for '{name}' not supported: this server takes {', '.join(allowed)}.")
        self.flag("preserve_formatting")
        self.flag("outline_detection")
        self.flag("show_billed_characters")


def language(code: str | None) -> str | None:
    """A DeepL language code as transq's: EN-US and EN-GB are en, ZH-HANS is zh; None stays None."""
    if code is None:
        return None
    return code.strip().lower().split("-", 1)[0] or None


def deepl_code(code: str) -> str:
    return code.upper()
