"""The batch policy: how big a model batch may be, and how sentences are grouped into batches.

The budget, in one place: TRANSQ_MAX_BATCH_SENTENCES counts rows (one beam of one sentence) and
TRANSQ_MAX_BATCH_TOKENS padded source tokens times beams, so a batch holds that many divided by the
beam size (48 rows: 48 sentences greedy, 12 at beam 4). On a GPU both are four times larger: its memory
is not the container's, and larger batches are what keep it busy. Within the budget the memory guard
(`fit_to_memory`) may still split a batch that would not fit in what the container has free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
    from shared.settings import Settings

GPU_SCALE = 4


def batch_budget(settings: Settings, num_beams: int, on_gpu: bool = False) -> tuple[int, int]:
    """Most sentences and padded source tokens in one batch."""
    scale = GPU_SCALE if on_gpu else 1
    return (
        max(1, settings.max_batch_sentences * scale // num_beams),
        max(1, settings.max_batch_tokens * scale // num_beams),
    )


class BatchInterrupted(Exception):
    """A batch was stopped before it finished (its sentences have no translation yet), so that
    sentences that arrived meanwhile can share a larger batch."""


def plan_batches(lengths: Sequence[int], max_tokens: int, max_sentences: int) -> list[list[int]]:
    """Indices of `lengths` grouped into batches sorted by length.

    A batch costs (its longest length) x (its size) padded tokens; it stays within
    `max_tokens` and `max_sentences`, so one long sentence never drags a batch of
    short ones and memory per batch is bounded. A sentence longer than the budget
    forms a batch of its own. Batches are as many as `max_sentences` needs, of even
    sizes: 64 sentences at 48 are 32 + 32, not 48 + 16.
    """
    if lengths:
        max_sentences = -(-len(lengths) // -(-len(lengths) // max_sentences))
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        longest = max(lengths[index], 1)  # sorted: the newcomer is the longest
        if current and (len(current) >= max_sentences or longest * (len(current) + 1) > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def fit_to_memory(
    batch: list[int],
    lengths: Sequence[int],
    available_bytes: int,
    estimate: Callable[[int, int], int],
) -> tuple[list[list[int]], list[int]]:
    """Split a batch until each part's estimated peak fits in `available_bytes`.

    Returns the parts that fit, and the indices that cannot fit even alone.
    """
    fitting: list[list[int]] = []
    too_big: list[int] = []
    pending = [batch]
    while pending:
        part = pending.pop(0)
        if estimate(len(part), max(lengths[i] for i in part) + 1) <= available_bytes:
            fitting.append(part)
        elif len(part) == 1:
            too_big.append(part[0])
        else:
            middle = len(part) // 2
            pending[:0] = [part[:middle], part[middle:]]
    return fitting, too_big
