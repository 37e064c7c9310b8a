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
