"""Other services' APIs over transq's one pipeline: DeepL API v2 (`deepl/`) and LibreTranslate's
(`libretranslate/`), so the clients people already use work unchanged. Each is a thin adapter: it reads its
API's request, builds transq's own (api.validation), submits it as every other call does (api.submission:
cache, batching, routes, detection, glossaries, quotas, rate limits, per-key isolation) and answers in its
API's shape, errors included (api.compat.reshape). TRANSQ_COMPAT_APIS chooses which are on."""

from __future__ import annotations

from flask import Flask

from shared.settings import Settings


def init_app(app: Flask, settings: Settings) -> None:
    """Register the APIs TRANSQ_COMPAT_APIS names, and where their clients put the API key."""
    readers = app.extensions.setdefault("transq_key_readers", [])
    if "deepl" in settings.compat_api_list:
        from api.compat import deepl

        for blueprint in deepl.blueprints():
            app.register_blueprint(blueprint)
        readers.append(deepl.presented_key)
    if "libretranslate" in settings.compat_api_list:
        from api.compat import libretranslate

        for blueprint in libretranslate.blueprints():
            app.register_blueprint(blueprint)
        readers.append(libretranslate.presented_key)
        app.extensions["transq_open_prefixes"] = (*app.extensions.get("transq_open_prefixes", ()), *libretranslate.OPEN)
        app.extensions["transq_limited_prefixes"] = libretranslate.LIMITED
