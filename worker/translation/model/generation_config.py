"""Which generation configs transq's decoding loop reproduces: field values compared with transformers'.

A config that spells out transformers' defaults (`output_attentions: false`, as `save_pretrained` writes
them) must keep the fast path; so each field's value is compared with the value transformers uses when
the field is left out, not merely its presence. Anything else the loop does not reproduce is named, so
the engine can say why it falls back to `generate()`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from transformers import GenerationConfig

# Generation-config fields this loop reproduces, whatever their value (within the checks of `for_model`).
_REPRODUCED = {
    "bad_words_ids",
    "bos_token_id",
    "decoder_start_token_id",
    "eos_token_id",
    "forced_eos_token_id",
    "pad_token_id",
    "num_beams",
    "max_length",
    "max_new_tokens",
    "min_new_tokens",
    "length_penalty",
    "early_stopping",
    "renormalize_logits",
    "do_sample",
    "use_cache",
}
# Fields that never change the tokens: what generate() returns besides them, and bookkeeping.
_NO_EFFECT = {
    "output_attentions",
    "output_hidden_states",
    "output_scores",
    "output_logits",
    "return_dict_in_generate",
    "transformers_version",
    "_from_model_config",
    "_commit_hash",
}
# Sampling-only fields: without do_sample, transformers builds no warper from them.
_SAMPLING_ONLY = {"temperature", "top_k", "top_p", "min_p", "typical_p", "epsilon_cutoff", "eta_cutoff"}


def unsupported(model: Any) -> list[str]:
    """Why this loop cannot give the model's tokens: the generation-config fields (with their values) that
    hold something other than transformers' default and that it does not reproduce; empty when it can."""
    config: GenerationConfig = model.generation_config
    if not getattr(model.config, "is_encoder_decoder", False):
        return ["a decoder-only model"]
    found = []
    for name, value in config.to_dict().items():
        if name in _REPRODUCED or name in _NO_EFFECT or (name in _SAMPLING_ONLY and not config.do_sample):
            continue
        if not _is_default(name, value):
            found.append(f"{name}={value!r}")
    if config.do_sample:
        found.append("do_sample=True")
    eos, forced, bad_words = ids(config.eos_token_id), ids(config.forced_eos_token_id), config.bad_words_ids or []
    if len(eos) != 1:
        found.append(f"eos_token_id={config.eos_token_id!r} (one end token only)")
    if len(forced) > 1:
        found.append(f"forced_eos_token_id={config.forced_eos_token_id!r} (one token only)")
    if any(len(words) != 1 for words in bad_words):
        found.append(f"bad_words_ids={bad_words!r} (single tokens only)")
    for name in ("decoder_start_token_id", "pad_token_id"):
        if getattr(config, name) is None:
            found.append(f"{name}=None")
    return found


@cache
def _defaults() -> dict[str, Any]:
    """transformers' value for each field when a config leaves it out (4.x: GenerationConfig()'s own values;
    5.x: None there, the values generate() then applies in `_get_default_generation_params`)."""
    defaults = GenerationConfig().to_dict()
    applied = getattr(GenerationConfig, "_get_default_generation_params", None)
    if callable(applied):
        defaults.update({k: v for k, v in applied().items() if defaults.get(k) is None})
    return defaults


def _is_default(name: str, value: Any) -> bool:
    """The value transformers uses when the field is left out (None, and False for an off switch, count too)."""
    default = _defaults().get(name)
    return value is None or value == default or (default is None and value is False)


def ids(value: Any) -> list[int]:
    if value is None:
        return []
    return [int(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
