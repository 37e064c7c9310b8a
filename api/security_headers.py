"""Headers every response carries: never content-sniffed, never framed; an HTML page also gets a
Content-Security-Policy that allows only its own origin's scripts, styles and requests (the page's script
and style are static files; the API docs' one inline call is allowed by its hash)."""

from __future__ import annotations

import base64
import hashlib

from flask import Flask, Response

_PAGE_POLICY = (
    "default-src 'self'; script-src 'self'{scripts}; style-src 'self'{styles}; img-src 'self' data: blob:; "
    "connect-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def script_hash(script: str) -> str:
    """The CSP source that allows one inline script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def page_policy(inline_scripts: tuple[str, ...] = (), inline_styles: bool = False) -> str:
    scripts = "".join(" " + script_hash(script) for script in inline_scripts)
    return _PAGE_POLICY.format(scripts=scripts, styles=" 'unsafe-inline'" if inline_styles else "")


def init_app(app: Flask) -> None:
    default_policy = page_policy()

    @app.after_request
    def _security_headers(response: Response) -> Response:
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        if response.mimetype == "text/html":
            response.headers.setdefault("Content-Security-Policy", default_policy)
        return response
