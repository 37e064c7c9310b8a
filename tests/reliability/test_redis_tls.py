"""Redis over TLS: every client transq makes (job store, cache, Celery's broker, rate limits) verifies the
server's certificate against TRANSQ_REDIS_CA_FILE, and refuses one it cannot verify."""

from __future__ import annotations

import pytest
import redis
from kombu.exceptions import OperationalError
from limits.storage import storage_from_string

from devstack.certificates import make_tls_files, tls_unavailable
from devstack.redis_server import RedisServer
from shared.celery_factory import make_celery
from shared.settings import Settings
from shared.store.redis_client import broker_redis, cache_redis, limiter_storage

pytestmark = pytest.mark.slow


@pytest.fixture
def tls_server(tmp_path):
    reason = tls_unavailable()
    if reason:
        pytest.skip(f"Redis over TLS: {reason}")
    trusted = make_tls_files(tmp_path / "trusted", ["127.0.0.1"])
    with RedisServer(password="pw", tls=trusted) as server:
        yield server, trusted, make_tls_files(tmp_path / "other", ["127.0.0.1"])


def _celery_connects(settings: Settings) -> bool:
    app = make_celery(settings)
    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, interval_start=0)
        return True
    except (OperationalError, redis.ConnectionError, OSError):
        return False


def test_every_client_verifies_the_server_with_the_ca_file(tls_server):
    server, trusted, other = tls_server
    url = f"rediss://:pw@127.0.0.1:{server.port}/0"
    settings = Settings(redis_url=url, redis_ca_file=trusted.ca)
    assert broker_redis(settings).ping() and cache_redis(settings).ping()
    assert _celery_connects(settings)
    uri, options = limiter_storage(broker_redis(settings))
    assert storage_from_string(uri, **options).check()
    # A CA that did not sign the server's certificate: every client refuses the server.
    wrong = Settings(redis_url=url, redis_ca_file=other.ca)
    for client in (broker_redis(wrong), cache_redis(wrong)):
        with pytest.raises(redis.ConnectionError):
            client.ping()
    assert not _celery_connects(wrong)
