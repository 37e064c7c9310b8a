"""What a valid API key is known by: job owners, quota and glossary keys, and /metrics labels all carry
this id, never the key. It is an HMAC-SHA256 of the key under a server secret, so an id read from the
broker or a scraped metric cannot be tested against a word list offline (a bare hash of a short key can).

The secret is TRANSQ_KEY_ID_SECRET, or, when that is empty, one made at random and kept in the broker on
first use (SET NX: every API process of a deployment reads the same one). A broker that loses it loses
the jobs and glossaries it names as well; a new secret gives every key a new id."""

from __future__ import annotations

import hashlib
import hmac
import secrets

import redis

from shared.store.keys import Keys


class KeyIds:
    def __init__(self, client: redis.Redis, keys: Keys, configured_secret: str = ""):
        self.client = client
        self.keys = keys
        self._secret = configured_secret.encode() if configured_secret else b""

    def secret(self) -> bytes:
        """The configured secret, or the broker's (made now when it has none)."""
        if not self._secret:
            made = secrets.token_hex(32)
            self.client.set(self.keys.key_id_secret, made, nx=True)
            kept = self.client.get(self.keys.key_id_secret) or made
            self._secret = (kept if isinstance(kept, str) else kept.decode()).encode()
        return self._secret

    def of(self, key: str) -> str:
        return "key:" + hmac.new(self.secret(), key.encode(), hashlib.sha256).hexdigest()[:32]
