"""GET /: the two-pane page (source left, translation right)."""

from __future__ import annotations

from flask import Blueprint, render_template

from api.current import services
from shared.document_formats import EXTENSIONS, FILE_FORMATS

bp = Blueprint("web", __name__, template_folder="templates", static_folder="static", static_url_path="/static")


@bp.get("/")
def index():  # type: ignore[no-untyped-def]
    settings = services().settings
    return render_template(
        "index.html",
        model=settings.model,
        needs_key=bool(settings.api_key_list),
        source=settings.source_lang,
        target=settings.target_lang,
        accept=",".join(EXTENSIONS),
        file_extensions=" ".join(ext for ext, fmt in EXTENSIONS.items() if fmt in FILE_FORMATS),
    )
