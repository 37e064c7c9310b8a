"""Teaching the offline test model to copy its input, so its "translation" of a sentence is that sentence.

Examples are spans of the corpus lines and strings of pieces drawn uniformly from the whole vocabulary
(so every piece, rare characters included, is copied as well as a common one), 1 to MAX_PIECES pieces,
each followed by the end token so the model learns where to stop. Seeded and single-threaded: the same
corpus gives the same model. This takes minutes, so the result ships with the package
(worker/translation/model/data/copy-model, see worker.translation.model.offline_model) and a newcomer never waits for it.
"""

from __future__ import annotations

import logging
import random
import time
from pathlib import Path
from typing import Sequence

log = logging.getLogger(__name__)

MAX_PIECES = 100  # longer than any sentence of worker/translation/model/data/zh_sentences.txt in pieces (78)
ROWS = 64
STEPS = 1500
LEARNING_RATE = 3e-3


def teach_to_copy(model, folder: Path, lines: Sequence[str], seed: int, steps: int = STEPS) -> None:  # type: ignore[no-untyped-def]
    """Train `model` (its tokenizer in `folder`) in place to give back its input; logs its progress."""
    import torch
    from transformers import MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(str(folder))
    encoded = [tokenizer(line, add_special_tokens=False)["input_ids"] for line in lines if line.strip()]
    pad, eos = model.config.pad_token_id, model.config.eos_token_id
    pieces = [i for i in range(model.config.vocab_size) if i not in (pad, eos, tokenizer.unk_token_id)]
    rng = random.Random(seed)  # torch's generator (dropout) goes on from the model's seeded initialisation
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same sums in the same order: the same model on every machine

    def example(longest: int) -> list[int]:
        length = rng.randint(1, longest)
        if rng.random() < 0.5:
            ids = rng.choice(encoded)
            start = rng.randint(0, max(0, len(ids) - length))
            return ids[start : start + length]
        return [rng.choice(pieces) for _ in range(length)]

    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=LEARNING_RATE, total_steps=steps, pct_start=0.1)
    model.train()
    started = time.monotonic()
    for step in range(1, steps + 1):
        longest = rng.randint(1, MAX_PIECES)  # one bound per batch: little padding
        batch = [example(longest) + [eos] for _ in range(ROWS)]
        width = max(len(ids) for ids in batch)
        inputs = torch.full((ROWS, width), pad)
        labels = torch.full((ROWS, width), -100)
        mask = torch.zeros((ROWS, width), dtype=torch.long)
        for row, ids in enumerate(batch):
            inputs[row, : len(ids)] = labels[row, : len(ids)] = torch.tensor(ids)
            mask[row, : len(ids)] = 1
        loss = model(input_ids=inputs, attention_mask=mask, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step % 100 == 0 or step == steps:
            seconds = time.monotonic() - started
            log.info(
                "teaching the test model to copy: step %d of %d, loss %.3f, %.0f s", step, steps, loss.item(), seconds
            )
    model.eval()
    torch.set_num_threads(threads)
