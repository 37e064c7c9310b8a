import pytest

from shared.settings import Settings
from shared.settings.environment import settings_table


def test_defaults_and_environment():
    settings = Settings.from_env({"TRANSQ_MAX_TEXTS": "7", "TRANSQ_TEST_HOOKS": "yes", "OTHER": "x"})
    assert settings.max_texts == 7
    assert settings.test_hooks is True
    assert settings.model == "Helsinki-NLP/opus-mt-zh-en"
    assert settings.effective_cache_url == settings.redis_url


def test_invalid_value_names_the_variable():
    with pytest.raises(ValueError, match="TRANSQ_MAX_TEXTS"):
        Settings.from_env({"TRANSQ_MAX_TEXTS": "many"})


def test_round_trip_through_environment():
    settings = Settings(max_chars=5, test_hooks=True, cache_url="redis://x")
    assert Settings.from_env(settings.as_env()) == settings


def test_every_setting_is_documented():
    table = settings_table(Settings)
    for name in ("TRANSQ_REDIS_URL", "TRANSQ_CACHE_URL", "TRANSQ_MODEL", "TRANSQ_MAX_BATCH_TOKENS", "TRANSQ_API_KEYS"):
        assert name in table


@pytest.mark.parametrize("prefix", ["transq :", "transq:\n", "tab\tprefix:", "nul\x00:", "x" * 65])
def test_a_key_prefix_with_whitespace_a_control_character_or_too_long_is_refused(prefix):
    with pytest.raises(ValueError, match="TRANSQ_KEY_PREFIX"):
        Settings.from_env({"TRANSQ_KEY_PREFIX": prefix})


def test_a_sane_key_prefix_is_taken():
    for prefix in ("transq:", "team-a:transq:", "t1", "翻译:"):
        assert Settings.from_env({"TRANSQ_KEY_PREFIX": prefix}).key_prefix == prefix


REAL = "0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize(
    "values, problem",
    [
        ({}, "TRANSQ_API_KEYS is empty"),
        ({"api_keys": " , "}, "TRANSQ_API_KEYS is empty"),
        ({"api_keys": f"{REAL},change-me"}, "TRANSQ_API_KEYS holds a placeholder"),
        ({"api_keys": REAL, "redis_url": "redis://:change-me@redis:6379/0"}, "TRANSQ_REDIS_URL holds a placeholder"),
        ({"api_keys": REAL, "cache_url": "redis://u:CHANGEME@cache:6379/0"}, "TRANSQ_CACHE_URL holds a placeholder"),
        ({"api_keys": REAL, "redis_url": "redis://:replace%2Dme@redis/0"}, "TRANSQ_REDIS_URL holds a placeholder"),
        ({"api_keys": REAL, "callback_secret": "change-me-to-a-long-secret"}, "TRANSQ_CALLBACK_SECRET holds"),
        ({"api_keys": REAL, "metrics_token": "password"}, "TRANSQ_METRICS_TOKEN holds a placeholder"),
        ({"api_keys": REAL, "key_id_secret": "example"}, "TRANSQ_KEY_ID_SECRET holds a placeholder"),
    ],
)
def test_production_refuses_no_api_keys_and_placeholder_credentials_without_showing_them(values, problem):
    with pytest.raises(ValueError, match="TRANSQ_PRODUCTION=1: refusing to start") as refused:
        Settings(production=True, **values)
    assert problem in str(refused.value)
    for secret in ("change-me", "CHANGEME", "replace", "password", "example"):
        assert secret not in str(refused.value).replace("TRANSQ_", "")


def test_production_takes_real_credentials_and_development_takes_anything():
    Settings(production=True, api_keys=REAL, redis_url=f"redis://:{REAL}@redis.example.internal:6379/0")
    Settings(redis_url="redis://:change-me@redis:6379/0")  # not production: as compose and transq dev run
    assert Settings.from_env({"TRANSQ_PRODUCTION": "1", "TRANSQ_API_KEYS": REAL}).production


@pytest.mark.parametrize(
    "url", ["mt.example.com", "ftp://mt.example.com", "https://mt.example.com/?next=x", "https://u:p@mt.example.com", "https://"]
)
def test_a_public_url_that_is_not_an_http_address_is_refused(url):
    with pytest.raises(ValueError, match="TRANSQ_PUBLIC_URL"):
        Settings.from_env({"TRANSQ_PUBLIC_URL": url})


def test_a_public_url_with_a_port_and_a_path_is_taken():
    assert Settings.from_env({"TRANSQ_PUBLIC_URL": "https://mt.example.com:8443/transq/"}).public_url.endswith("/transq/")
