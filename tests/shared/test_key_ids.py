"""API key ids (shared.store.key_ids) on a real Redis: keyed with a server secret, never a bare hash of the
key; without a configured secret every process of a deployment makes or finds the same one in the broker."""

import hashlib
import hmac

import redis

from shared.store.key_ids import KeyIds
from shared.store.keys import Keys


def test_an_id_is_an_hmac_under_the_configured_secret_not_a_bare_hash(redis_server):
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    ids = KeyIds(client, Keys("t:"), "configured-secret")
    expected = "key:" + hmac.new(b"configured-secret", b"alice-key", hashlib.sha256).hexdigest()[:32]
    assert ids.of("alice-key") == expected
    assert hashlib.sha256(b"alice-key").hexdigest()[:32] not in ids.of("alice-key")
    assert client.get(Keys("t:").key_id_secret) is None  # a configured secret is never written to the broker


def test_without_a_configured_secret_every_process_finds_the_same_one_in_the_broker(redis_server):
    first = KeyIds(redis.Redis.from_url(redis_server.url, decode_responses=True), Keys("u:"))
    second = KeyIds(redis.Redis.from_url(redis_server.url), Keys("u:"))  # another process, bytes client
    assert first.of("bob-key") == second.of("bob-key") != first.of("carol-key")
    secret = redis.Redis.from_url(redis_server.url, decode_responses=True).get(Keys("u:").key_id_secret)
    assert len(secret) == 64 and first.secret() == secret.encode()
    other_deployment = KeyIds(redis.Redis.from_url(redis_server.url, decode_responses=True), Keys("v:"))
    assert other_deployment.of("bob-key") != first.of("bob-key")  # its own secret: ids differ
