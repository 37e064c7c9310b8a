"""The engine loads the test model through the same from_pretrained path as the real model."""

import pytest

from shared.settings import Settings


@pytest.fixture(scope="module")
def engine(model_dir):
    from worker.engine import TranslationEngine

    return TranslationEngine(Settings(model=str(model_dir), max_new_tokens=6, max_input_tokens=16))


def test_loads_quantized_and_translates_a_batch(engine):
    import torch

    assert engine.quantization == "int8-dynamic"
    assert any(isinstance(m, torch.ao.nn.quantized.dynamic.Linear) for m in engine.model.modules())
    ids = engine.token_ids(["今天天气很好。", "谢谢你的帮助！"])
    out = engine.translate_ids(ids)
    assert len(out) == 2 and all(isinstance(t, str) for t in out)
    assert all("<pad>" not in t and "</s>" not in t for t in out)


def test_long_input_is_chunked_within_the_position_limit(engine):
    ids = engine.token_ids(["这是一个很长的句子" * 20])[0]
    chunks = engine.chunks(ids)
    assert len(chunks) > 1 and all(len(c) <= engine.max_input_tokens for c in chunks)
    assert [t for c in chunks for t in c] == ids


def test_identity_names_model_revision_and_generation(engine):
    identity = engine.identity
    assert identity["revision"].startswith("local-")
    assert identity["num_beams"] == 1 and identity["max_new_tokens"] == 6


def test_unloadable_model_is_a_clear_error(tmp_path):
    from worker.engine import ModelLoadError, TranslationEngine

    with pytest.raises(ModelLoadError, match="cannot load model"):
        TranslationEngine(Settings(model=str(tmp_path / "missing")))
