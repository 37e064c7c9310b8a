"""The engine loads the test model through the same from_pretrained path as the real model."""

import pytest

from shared.settings import Settings


def test_loads_quantized_and_translates_a_batch(engine):
    import torch

    assert engine.quantization == "int8-dynamic-emb8"
    assert any(isinstance(m, torch.ao.nn.quantized.dynamic.Linear) for m in engine.model.modules())
    # One 8-bit table behind the encoder's, the decoder's and the shared embedding, no fp32 table left.
    inner = engine.model.model
    assert isinstance(inner.shared, torch.ao.nn.quantized.Embedding)
    assert inner.shared is inner.encoder.embed_tokens is inner.decoder.embed_tokens
    assert not any(type(m) is torch.nn.Embedding for m in engine.model.modules())
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
    from worker.translation.model.engine import ModelLoadError, TranslationEngine

    with pytest.raises(ModelLoadError, match="cannot load model"):
        TranslationEngine(Settings(model=str(tmp_path / "missing")))


def test_int8_swap_releases_pages_without_changing_weights(model_dir):
    """Dropping file pages must never zero a weight: they fault back in from the file."""
    import torch
    from transformers import AutoModelForSeq2SeqLM

    from worker.translation.model.quantization import FileMappings, quantize_int8, release_file_pages

    model = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    reference = AutoModelForSeq2SeqLM.from_pretrained(str(model_dir))
    reference.eval()
    qconfigs = {
        torch.nn.Linear: torch.ao.quantization.default_dynamic_qconfig,
        torch.nn.Embedding: torch.ao.quantization.float_qparams_weight_only_qconfig,
    }
    reference = torch.ao.quantization.quantize_dynamic(reference, qconfigs, dtype=torch.qint8)
    assert quantize_int8(model) > 0
    for name, param in model.named_parameters():
        assert torch.equal(param, before[name]), name
    ids = torch.tensor([[5, 6, 7, 0]])
    with torch.inference_mode():
        assert torch.equal(
            model.generate(input_ids=ids, max_new_tokens=5), reference.generate(input_ids=ids, max_new_tokens=5)
        )
    # Anonymous memory is never released (that would zero it).
    anonymous = torch.ones(4096 * 4)
    assert release_file_pages(anonymous, FileMappings()) == 0 and anonymous.sum() == 4096 * 4


def test_fast_marian_positions_are_bit_identical(engine):
    import torch
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    from worker.translation.model.marian_positions import exact_create_weight

    assert MarianSinusoidalPositionalEmbedding.create_weight is exact_create_weight  # installed by loading a model
    for n_pos, dim in ((512, 512), (64, 31), (7, 8)):
        module = MarianSinusoidalPositionalEmbedding(n_pos, dim)
        original = MarianSinusoidalPositionalEmbedding._transq_original_create_weight(module)
        assert torch.equal(exact_create_weight(module), original)


IMPORT_ONLY = """
from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding as embedding
from transformers.utils import logging
before = logging.get_verbosity()
import worker.translation.model.engine
import worker.translation.model.generation_config
import worker.translation.model.heap
print(getattr(embedding, "_transq_fast", False), logging.get_verbosity() == before)
"""


def test_importing_the_engine_changes_nothing_in_transformers():
    import subprocess
    import sys

    from tests.stack import ROOT

    done = subprocess.run([sys.executable, "-c", IMPORT_ONLY], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
