"""The degenerate-output guard's second try (worker.translation.model.output_guard): all the looping sentences at once.

Each sentence is translated again piece by piece, any 3-token phrase allowed once only (transformers'
no_repeat_ngram_size=3) and each piece's output capped at twice its source tokens plus 8. The pieces go
through the engine's own decoding loop in batches, with the n-gram blocking and each piece's cap in the
loop, so a batch of looping sentences costs about what a batch of translations does; before, each went
alone through generate(). Where the engine fell back to generate(), so does this, one piece per call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import torch

from worker.translation.model.batching import plan_batches
from worker.translation.model.heap import trim_heap

if TYPE_CHECKING:
    from worker.translation.model.engine import TranslationEngine

NO_REPEAT_NGRAM = 3


@torch.inference_mode()
def translate_guarded(engine: TranslationEngine, sentences: Sequence[str]) -> list[str]:
    """Each sentence translated again (see the module's docstring)."""
    pieces = [(n, chunk) for n, ids in enumerate(engine.token_ids(sentences)) for chunk in engine.chunks(ids)]
    caps = [min(engine.max_new_tokens, 2 * len(chunk) + 8) for _, chunk in pieces]
    texts: list[str] = [""] * len(pieces)
    sentences_per_batch, tokens_per_batch = engine.batch_budget()
    for batch in plan_batches([len(c) for _, c in pieces], tokens_per_batch, sentences_per_batch):
        input_ids, attention = engine.batch_inputs([pieces[i][1] for i in batch])
        limits = [caps[i] for i in batch]
        if engine.decoder is not None:
            output: Any = engine.decoder.generate(
                engine.model,
                input_ids,
                attention,
                engine.num_beams,
                max(limits),
                projection=engine.projection,
                no_repeat_ngram=NO_REPEAT_NGRAM,
                limits=limits,
            )
        else:
            output = [_generate_one(engine, input_ids[row], attention[row], limit) for row, limit in enumerate(limits)]
        decoded = engine.tokenizer.batch_decode(output, skip_special_tokens=True, clean_up_tokenization_spaces=True)
        for i, text in zip(batch, decoded):
            texts[i] = text
    trim_heap()
    joined: list[list[str]] = [[] for _ in sentences]
    for (n, _), text in zip(pieces, texts):
        joined[n].append(text)
    return [" ".join(" ".join(parts).split()) for parts in joined]


def _generate_one(engine: TranslationEngine, ids: torch.Tensor, mask: torch.Tensor, limit: int) -> torch.Tensor:
    length = int(mask.sum())
    return engine.model.generate(
        input_ids=ids[None, :length],
        attention_mask=mask[None, :length],
        num_beams=engine.num_beams,
        max_new_tokens=limit,
        no_repeat_ngram_size=NO_REPEAT_NGRAM,
        do_sample=False,
    )[0]
