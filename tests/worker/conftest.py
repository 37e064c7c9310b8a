"""The engine over the tiny test model, as the worker tests use it."""

import pytest
import torch

from shared.settings import Settings


@pytest.fixture(scope="module")
def engine(model_dir):
    from worker.translation.model.engine import TranslationEngine

    return TranslationEngine(Settings(model=str(model_dir), max_new_tokens=6, max_input_tokens=16))


@pytest.fixture(scope="module")
def eos_prone(model_dir):
    """The test model's shape with larger random weights (outputs that depend on the input) and end of
    sentence made likely, so that beams end at many different steps."""
    return _eos_prone(model_dir, small=True)


@pytest.fixture(scope="session")
def split_model_dir(tmp_path_factory):
    """An untrained tiny model whose target side has a sentencepiece model of its own (the shipped copy
    model shares one between both sides): a target vocabulary smaller than the whole, as opus-mt's."""
    from worker.translation.model.offline_model import make_test_model

    return make_test_model(tmp_path_factory.mktemp("model") / "split", behaviour="random")


@pytest.fixture(scope="module")
def split_engine(split_model_dir):
    from worker.translation.model.engine import TranslationEngine

    return TranslationEngine(Settings(model=str(split_model_dir), max_new_tokens=6, max_input_tokens=16))


@pytest.fixture(scope="module")
def split_eos_prone(split_model_dir):
    return _eos_prone(split_model_dir)


def _eos_prone(model_dir, small: bool = False):  # type: ignore[no-untyped-def]
    from transformers import AutoConfig, GenerationConfig, MarianMTModel

    config = AutoConfig.from_pretrained(str(model_dir))
    if small:  # the copy model's shape (one head, d_model 256: its weights are constructed) is no random model's,
        # random outputs in it all end at once or never: 4 heads of d_model 64, as the tests were written for
        config.update({"d_model": 64, "encoder_attention_heads": 4, "decoder_attention_heads": 4})
        config.update({"encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "encoder_layers": 1, "decoder_layers": 1})
    config.init_std = 0.3
    torch.manual_seed(1)
    model = MarianMTModel(config).eval()
    model.generation_config = GenerationConfig.from_pretrained(str(model_dir))
    with torch.no_grad():
        model.final_logits_bias[0, model.generation_config.eos_token_id] += 9.0 if small else 6.0
    return model
