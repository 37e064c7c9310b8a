"""What a request's view uses: the current app's Services (made once per process by api.create_app)."""

from __future__ import annotations

from flask import current_app

from shared.store.backends import Services


def services() -> Services:
    """The Services of the current app."""
    return current_app.extensions["transq"]  # type: ignore[no-any-return]
