"""A stack with API keys for the compat APIs' clients: GOOD has no limit, POOR 20 characters a day."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Iterator

import pytest
import requests

from tests.conftest import Stack

GOOD, POOR, SECRET = "good-key-1", "poor-key-2", "compat-test-secret"
# TRANSQ_PUBLIC_URL: the address a proxy in front would serve; URLs the API writes start with it, whatever the Host
PUBLIC_URL = "https://mt.example.com/transq"


def key_id(key: str) -> str:
    """The id transq knows `key` by (shared.store.key_ids), under the stack's TRANSQ_KEY_ID_SECRET."""
    return "key:" + hmac.new(SECRET.encode(), key.encode(), hashlib.sha256).hexdigest()[:32]


@pytest.fixture(scope="package")
def compat_stack(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Iterator[Stack]:
    s = Stack(
        tmp_path_factory.mktemp("compat"),
        model_dir,
        api_keys=f"{GOOD},{POOR}",
        key_id_secret=SECRET,
        quota_overrides=f"{key_id(POOR)}=20/0",
        auth_failure_limit="",
        public_url=PUBLIC_URL,
    )
    try:
        yield s.start()
    finally:
        s.close()


def native_translation(stack: Stack, text: str) -> str:
    """What transq's own POST /v1/translate answers for `text` (the compat APIs must answer the same)."""
    response = requests.post(
        stack.api.url + "/v1/translate",
        json={"text": text, "timeout": 30},
        headers={"Authorization": f"Bearer {GOOD}"},
        timeout=40,
    )
    assert response.status_code == 200, response.text
    return response.json()["translations"][0]
