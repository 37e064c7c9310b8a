"""Settings and URLs for Redis on other hosts: secrets from files, TLS, sentinels (no server needed)."""

from __future__ import annotations

import ssl

import pytest

from shared.celery_factory import broker_url, make_celery
from shared.settings import Settings
from shared.store.redis_client import (
    celery_tls_options,
    describe_broker,
    describe_cache,
    redact_url,
    sentinel_addresses,
    tls_options,
)


def test_url_and_api_keys_come_from_files_named_by_FILE_variables(tmp_path):
    secret = tmp_path / "redis-url"
    secret.write_text("redis://transq:s3cret@10.0.0.5:6379/0\n")
    keys = tmp_path / "keys"
    keys.write_text("k1,k2")
    settings = Settings.from_env({"TRANSQ_REDIS_URL_FILE": str(secret), "TRANSQ_API_KEYS_FILE": str(keys)})
    assert settings.redis_url == "redis://transq:s3cret@10.0.0.5:6379/0"
    assert settings.api_key_list == ["k1", "k2"]
    # The variable itself wins over its file.
    assert Settings.from_env({"TRANSQ_REDIS_URL": "redis://a:1/0", "TRANSQ_REDIS_URL_FILE": str(secret)}).redis_url == (
        "redis://a:1/0"
    )


def test_an_unreadable_secret_file_is_refused_naming_the_variable(tmp_path):
    with pytest.raises(ValueError, match="TRANSQ_CACHE_URL_FILE"):
        Settings.from_env({"TRANSQ_CACHE_URL_FILE": str(tmp_path / "missing")})


def test_passwords_never_appear_in_what_is_logged():
    assert redact_url("redis://transq:s3cret@h:6379/0") == "redis://transq:***@h:6379/0"
    assert redact_url("rediss://:s3cret@h:6379/0") == "rediss://:***@h:6379/0"
    settings = Settings(redis_url="redis://:s3cret@h:6379/0", redis_sentinels="a:26379,b:26379")
    assert "s3cret" not in describe_broker(settings) and "s3cret" not in describe_cache(settings)
    assert describe_cache(settings) == "master 'transq' of sentinels a:26379,b:26379"
    assert describe_cache(Settings(cache_url="redis://:s3cret@c:6379/0")) == "redis://:***@c:6379/0"


def test_rediss_urls_verify_the_server_with_the_ca_file():
    settings = Settings(redis_url="rediss://:pw@h:6380/0", redis_ca_file="/etc/ca.pem")
    assert tls_options(settings, settings.redis_url) == {"ssl_cert_reqs": "required", "ssl_ca_certs": "/etc/ca.pem"}
    assert celery_tls_options(settings, settings.redis_url) == {
        "ssl_cert_reqs": ssl.CERT_REQUIRED,
        "ssl_ca_certs": "/etc/ca.pem",
    }
    # The URL's own ssl_ca_certs wins; Celery gets it as broker_use_ssl, not in the URL.
    url = "rediss://:pw@h:6380/0?ssl_ca_certs=/other.pem&ssl_cert_reqs=required"
    with_ca = Settings(redis_url=url, redis_ca_file="/etc/ca.pem")
    assert celery_tls_options(with_ca, url)["ssl_ca_certs"] == "/other.pem"
    assert broker_url(with_ca) == "rediss://:pw@h:6380/0"
    assert make_celery(with_ca).conf.broker_use_ssl["ssl_ca_certs"] == "/other.pem"
    assert tls_options(settings, "redis://h:6379/0") == {} and celery_tls_options(settings, "redis://h/0") is None


def test_sentinels_make_one_sentinel_url_each_with_the_credentials_and_the_master_name():
    settings = Settings(
        redis_url="redis://transq:pw@ignored:6379/2", redis_sentinels="10.0.0.1:26379, 10.0.0.2:26380", redis_master="m"
    )
    assert sentinel_addresses(settings) == [("10.0.0.1", 26379), ("10.0.0.2", 26380)]
    assert broker_url(settings) == "sentinel://transq:pw@10.0.0.1:26379/2;sentinel://transq:pw@10.0.0.2:26380/2"
    assert make_celery(settings).conf.broker_transport_options["master_name"] == "m"


@pytest.mark.parametrize("bad", ["10.0.0.1", "10.0.0.1:port", "a:1,,b", "a:1;b:2"])
def test_malformed_sentinel_lists_are_refused_at_start(bad):
    with pytest.raises(ValueError, match="TRANSQ_REDIS_SENTINELS"):
        Settings(redis_sentinels=bad)
