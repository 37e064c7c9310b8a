"""Routes: a model's language pair and its own queue, computed without loading the model."""

import json

import pytest

from shared.routing.routes import language_pair, route_for
from shared.settings import Settings


def test_the_pair_comes_from_the_setting_then_the_model_then_the_defaults(tmp_path):
    assert language_pair(Settings(languages="EN-zh")) == ("en", "zh")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(json.dumps({"source_lang": "deu", "target_lang": "eng"}))
    assert language_pair(Settings(model=str(folder))) == ("de", "en")  # three-letter codes as clients send them
    assert language_pair(Settings(model="Helsinki-NLP/opus-mt-en-zh")) == ("en", "zh")
    assert language_pair(Settings(model="my-org/some-model", source_lang="ja", target_lang="en")) == ("ja", "en")


def test_one_model_with_other_generation_settings_is_another_route():
    plain = route_for(Settings(model="Helsinki-NLP/opus-mt-zh-en"))
    assert plain.pair == "zh-en" and plain.key.startswith("zh-en-")
    assert route_for(Settings(model="Helsinki-NLP/opus-mt-zh-en")) == plain
    assert route_for(Settings(model="Helsinki-NLP/opus-mt-zh-en", num_beams=4)).key != plain.key
    assert route_for(Settings(model="Helsinki-NLP/opus-mt-en-zh")).pair == "en-zh"


@pytest.mark.parametrize(
    "values, named",
    [
        ({"device": "gpu"}, "TRANSQ_DEVICE"),
        ({"quantize": "int4"}, "TRANSQ_QUANTIZE"),
        ({"log_format": "xml"}, "TRANSQ_LOG_FORMAT"),
        ({"task_soft_time_limit": 700}, "TRANSQ_TASK_SOFT_TIME_LIMIT"),
        ({"task_time_limit": 1000}, "TRANSQ_VISIBILITY_TIMEOUT"),
        ({"languages": "chinese"}, "TRANSQ_LANGUAGES"),
        ({"max_batch_sentences": 0}, "TRANSQ_MAX_BATCH_SENTENCES"),
    ],
)
def test_settings_refuse_values_the_service_cannot_run_with(values, named):
    with pytest.raises(ValueError, match=named):
        Settings(**values)


def test_a_named_route_keeps_its_key_whatever_the_model_or_its_settings():
    """TRANSQ_ROUTE: the key an autoscaler watches, readable off a deployment's manifest."""
    named = route_for(Settings(model="Helsinki-NLP/opus-mt-zh-en", route="zh-en"))
    assert named.key == "zh-en" and named.pair == "zh-en"
    assert route_for(Settings(model="/opt/model", languages="zh-en", num_beams=4, route="zh-en")).key == "zh-en"


@pytest.mark.parametrize(
    "name",
    ["ZH-EN", "zh en", "zh-en\n", "-zh", "a" * 64, "zh:en", "zh/en", "zh-en*", "中文", "zh-en\x00"],
)
def test_a_route_name_that_cannot_name_a_key_is_refused_naming_the_variable(name):
    with pytest.raises(ValueError, match="TRANSQ_ROUTE="):
        Settings(route=name)
