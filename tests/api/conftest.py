import pytest

from api import create_app
from tests.stack import stack_settings


@pytest.fixture
def make_app(redis_server, tmp_path):
    """The real app on a real (private) Redis, served by Flask's test client; no worker."""

    def make(**overrides):
        settings = stack_settings(redis_server.url, tmp_path / "no-model", **overrides)
        return create_app({"SETTINGS": settings, "TESTING": True})

    return make


@pytest.fixture
def client(make_app):
    return make_app().test_client()
