"""The served languages as other APIs list them: codes of the served pairs, with English names."""

from __future__ import annotations

from api.current import services

NAMES = {
    "ar": "Arabic",
    "bg": "Bulgarian",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "et": "Estonian",
    "fi": "Finnish",
    "fr": "French",
    "hu": "Hungarian",
    "id": "Indonesian",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "lt": "Lithuanian",
    "lv": "Latvian",
    "nb": "Norwegian",
    "nl": "Dutch",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sk": "Slovak",
    "sl": "Slovenian",
    "sv": "Swedish",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "vi": "Vietnamese",
    "zh": "Chinese",
}


def name_of(code: str) -> str:
    return NAMES.get(code, code)


def served_pairs() -> list[tuple[str, str]]:
    """(source, target) of every served pair, sorted."""
    return sorted((pair.source, pair.target) for pair in services().routes.pairs().values())


def targets_by_source() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for source, target in served_pairs():
        found.setdefault(source, []).append(target)
    return found
