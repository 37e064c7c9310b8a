"""Redis across hosts with a password: workers on other hosts translate jobs submitted through the API host."""

from __future__ import annotations

import pytest
import redis

from devstack.certificates import tls_unavailable

pytestmark = pytest.mark.slow

PASSWORD = "pw-Across-Hosts-7"


def test_workers_on_other_hosts_translate_with_a_password_and_strangers_are_refused(host_stack):
    # The broker has an ACL user (redis://transq:…@broker), the cache a password for its default user.
    s = host_stack(password=PASSWORD, username="transq", workers=2)
    assert s.settings.redis_url.startswith("redis://transq:") and s.settings.cache_url.startswith("redis://:")
    jobs = [s.client.submit([f"第{i}句话。", f"另一句{i}。"]) for i in range(6)]
    done = [s.wait_status(j["id"], ("succeeded", "failed"), timeout=60) for j in jobs]
    assert [j["status"] for j in done] == ["succeeded"] * 6
    # Both workers, each on its own host, reached the broker with the password and report ready.
    assert all(w.is_ready() for w in s.workers)
    # A client on another host without the password is refused; with a wrong one, or as the default user, too.
    host = s.hosts["broker"].address
    for username, password in ((None, None), ("transq", "wrong"), (None, PASSWORD)):
        stranger = redis.Redis(host=host, port=s.redis.port, username=username, password=password, socket_timeout=2)
        with pytest.raises((redis.AuthenticationError, redis.ResponseError)):
            stranger.set("transq:stolen", "1")
    assert s.r.get("transq:stolen") is None
    # The password is in no log.
    for log in s.tmp.glob("*.log"):
        assert PASSWORD not in log.read_text(errors="replace"), log.name


def test_redis_over_tls_across_hosts_with_a_certificate_the_test_made(host_stack):
    reason = tls_unavailable()
    if reason:
        pytest.skip(f"Redis over TLS: {reason}")
    s = host_stack(password=PASSWORD, tls=True, workers=1)
    assert s.settings.redis_url.startswith("rediss://") and s.settings.cache_url.startswith("rediss://")
    job = s.client.submit(["加密的句子。", "第二句。"])
    assert s.wait_status(job["id"], ("succeeded", "failed"), timeout=60)["status"] == "succeeded"
    # The servers speak TLS only: a plain-text client gets nothing.
    plain = redis.Redis(host=s.hosts["broker"].address, port=s.redis.port, password=PASSWORD, socket_timeout=2)
    with pytest.raises(redis.ConnectionError):
        plain.ping()
    # A TLS client that does not trust the test's CA refuses the server's certificate.
    untrusting = redis.Redis(
        host=s.hosts["broker"].address, port=s.redis.port, password=PASSWORD, ssl=True, socket_timeout=2
    )
    with pytest.raises(redis.ConnectionError):
        untrusting.ping()
