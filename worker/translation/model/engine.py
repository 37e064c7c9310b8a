"""The translation engine: loads a seq2seq model once and translates batches of sentences.

Quantization and generation sit behind this one small interface, so that another
engine (torchao with compilation, CTranslate2) is one change, not a rewrite.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from transformers import AutoModelForSeq2SeqLM
from transformers.utils import logging as transformers_logging

from shared.memory import allowed_cpus
from shared.settings import Settings
from worker.translation.model import confidence, marian_positions
from worker.translation.model.batching import batch_budget
from worker.translation.model.cpu_threads import thread_governor
from worker.translation.model.decoding import Decoder
from worker.translation.model.generation_config import unsupported
from worker.translation.model.heap import MemoryTrail, release_freed_memory
from worker.translation.model.output_projection import OutputProjection, target_token_ids
from worker.translation.model.quantization import quantize_int8
from worker.translation.model.revision import model_revision
from worker.translation.model.tokenizer_loading import load_tokenizer

log = logging.getLogger(__name__)


def prepare_transformers() -> None:
    """What loading a model changes in transformers, for the whole process (idempotent; importing this module
    changes nothing): worker logs are ours, so no progress bars and transformers speaks only on errors; and
    Marian's sinusoid table is built fast (worker.translation.model.marian_positions)."""
    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    marian_positions.install()


class ModelLoadError(RuntimeError):
    """The model could not be loaded (unreachable hub, missing folder, bad files)."""


@dataclass(frozen=True)
class Shape:
    """What the memory estimate needs to know about the model."""

    d_model: int
    decoder_layers: int
    encoder_layers: int
    ffn_dim: int
    vocab_size: int


class TranslationEngine:
    """One model, loaded once per worker process, called with batches of sentences."""

    def __init__(self, settings: Settings):
        self.settings = settings
        started = time.perf_counter()
        self.memory = MemoryTrail()
        prepare_transformers()
        self.device = _choose_device(settings.device)
        # int8 on CPU: a team sized by the CPU it gets; a float model's sums keep one team size (bit for bit)
        governed = not settings.torch_threads and self.device.type == "cpu" and settings.quantize == "int8"
        self.governor = thread_governor(governed, settings.torch_threads or allowed_cpus(), torch.set_num_threads)
        try:
            self.tokenizer = load_tokenizer(settings.model)  # sentencepiece alone for a Marian model
            dtype = _cuda_dtype() if self.device.type == "cuda" else torch.float32
            model = AutoModelForSeq2SeqLM.from_pretrained(settings.model, dtype=dtype)
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"cannot load model {settings.model!r}: {exc}") from exc
        model.eval()
        self.quantization = "none"
        if self.device.type == "cpu" and settings.quantize == "int8":
            # Layer by layer, dropping each fp32 weight's pages: fp32 and int8 are never resident together.
            quantize_int8(model)
            self.quantization = "int8-dynamic-emb8"
        elif self.device.type == "cuda":
            self.quantization = str(dtype).replace("torch.", "")
        self.model = model.to(self.device)
        # Our decoding loop where it gives transformers' tokens for this generation config, else generate(),
        # loudly: a fallback costs a large share of the throughput (docs/architecture.md, "Decoding").
        fields = unsupported(self.model)
        self.decoder = None if fields else Decoder.for_model(self.model)
        self.decoding = "transq" if self.decoder else "generate"
        self.projection = self._output_projection(self.model, settings)
        if fields:
            log.warning(
                "decoding falls back to transformers' generate() (slower): the generation config of %s sets %s",
                settings.model,
                ", ".join(fields),
            )
        self.tokens_generated = 0  # output tokens so far, end tokens included (for benchmarks and metrics)
        release_freed_memory()
        config = model.config
        self.shape = Shape(
            d_model=config.d_model,
            decoder_layers=config.decoder_layers,
            encoder_layers=config.encoder_layers,
            ffn_dim=getattr(config, "decoder_ffn_dim", 4 * config.d_model),
            vocab_size=config.vocab_size,
        )
        generation = model.generation_config
        self.num_beams = settings.num_beams or int(getattr(generation, "num_beams", None) or 1)
        model_limit = int(getattr(config, "max_position_embeddings", 512) or 512)
        self.max_input_tokens = min(settings.max_input_tokens, model_limit) - 1  # room for </s>
        self.max_new_tokens = min(settings.max_new_tokens, model_limit)
        self.min_new_tokens = min(settings.min_new_tokens, self.max_new_tokens)
        self.identity = {
            "model": settings.model,
            "revision": model_revision(settings.model),
            "num_beams": self.num_beams,
            "max_new_tokens": self.max_new_tokens,
            "min_new_tokens": self.min_new_tokens,
            "max_input_tokens": self.max_input_tokens,
            "quantization": self.quantization,
            "device": self.device.type,
            # only when in use (our loop; generate() has the whole layer): tokens may differ, cached apart
            **({"output_vocabulary": "target"} if self.projection.columns is not None else {}),
        }
        self.load_seconds = time.perf_counter() - started
        self.resident_bytes = self.memory.loaded()
        log.info(
            "model %s loaded in %.1fs on %s (threads=%d, quantization=%s, beams=%d, decoding=%s, rss=%.0f MiB)",
            settings.model,
            self.load_seconds,
            self.device,
            torch.get_num_threads(),
            self.quantization,
            self.num_beams,
            self.decoding,
            self.resident_bytes / 2**20,
        )

    def _output_projection(self, model: Any, settings: Settings) -> OutputProjection:
        """The model's own output layer, or (TRANSQ_TARGET_VOCABULARY, for our decoding loop: generate()
        keeps the model's own) one over its target vocabulary. Call after quantizing."""
        use = settings.target_vocabulary and self.decoder is not None
        token_ids = target_token_ids(self.tokenizer) if use else None
        if token_ids is None:
            return OutputProjection.full(model)
        log.info(
            "output layer restricted to the target vocabulary: %d of %d tokens", len(token_ids), model.config.vocab_size
        )
        return OutputProjection.restricted(model, token_ids)

    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Source token ids of each sentence, without the end token; text spelling "</s>" or "<pad>" is text."""
        if not sentences:  # AutoTokenizer raises on an empty list
            return []
        encoded = self.tokenizer(list(sentences), add_special_tokens=False, split_special_tokens=True)["input_ids"]
        return [list(ids) for ids in encoded]

    def chunks(self, ids: list[int]) -> list[list[int]]:
        """A sentence too long for the model becomes consecutive pieces; nothing is truncated."""
        step = self.max_input_tokens
        return [ids[i : i + step] for i in range(0, max(len(ids), 1), step)]

    def batch_budget(self) -> tuple[int, int]:
        """Most sentences and padded source tokens per batch (see worker.translation.model.batching.batch_budget)."""
        return batch_budget(self.settings, self.num_beams, on_gpu=self.device.type == "cuda")

    def estimate_batch_bytes(self, batch_size: int, source_tokens: int, num_beams: int | None = None) -> int:
        """An upper bound on the extra memory generating this batch needs (at `num_beams`: the quality gate's)."""
        s, rows, elem = self.shape, batch_size * (num_beams or self.num_beams), 4
        target = self.max_new_tokens
        kv_cache = s.decoder_layers * 2 * rows * s.d_model * (target + source_tokens) * elem
        # per-step vocabulary-sized temporaries: logits and their bias-added copy in our loop, ~10 in generate()
        logits = rows * s.vocab_size * elem * (3 if self.decoder else 10)
        encoder = batch_size * source_tokens * (s.d_model * 4 + s.ffn_dim) * elem
        return int((kv_cache + logits + encoder) * 1.5)

    def warm_up(self) -> None:
        """One tiny generation, so the first job does not pay for lazy initialisation."""
        self.translate_ids(self.token_ids(["你好。"]), max_new_tokens=2)

    def batch_inputs(self, batch: Sequence[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Input ids (each sequence ended by </s>, padded on the right) and their attention mask, on the
        engine's device."""
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id
        longest = max(len(ids) for ids in batch) + 1
        input_ids = torch.full((len(batch), longest), pad, dtype=torch.long)
        attention = torch.zeros((len(batch), longest), dtype=torch.long)
        for row, ids in enumerate(batch):
            sequence = list(ids) + [eos]
            input_ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
            attention[row, : len(sequence)] = 1
        return input_ids.to(self.device), attention.to(self.device)

    def translate(self, texts: Sequence[str], scores: bool = False) -> list[str] | tuple[list[str], list[float]]:
        """Translate sentences (each within max_input_tokens) in one batch; with `scores`, also each
        one's confidence (worker.translation.model.confidence): (translations, confidences)."""
        confidences: list[float] = []
        texts_out = self.translate_ids(self.token_ids(texts), scores=confidences if scores else None)
        return (texts_out, confidences) if scores else texts_out

    @torch.inference_mode()
    def translate_ids(
        self,
        batch: Sequence[list[int]],
        max_new_tokens: int | None = None,
        interrupt: Callable[[], bool] | None = None,
        scores: list | None = None,
        num_beams: int | None = None,
    ) -> list[str]:
        """Translate one batch of token-id sequences (each at most max_input_tokens long). `interrupt`
        is asked before each decoding step (by our decoding loop; generate() runs to the end); when it
        answers True, BatchInterrupted is raised and nothing of the batch is returned. A `scores` list receives
        each sentence's confidence; `num_beams`: the quality gate's retry with a wider beam (round.quality_gate)."""
        if not batch:
            return []
        input_ids, attention = self.batch_inputs(batch)
        beams = num_beams or self.num_beams
        new_tokens = max_new_tokens or self.max_new_tokens
        min_new_tokens = self.min_new_tokens if not max_new_tokens else 0
        if self.governor is not None:
            self.governor.tick()  # generate() has no steps of ours: at least once per batch
            interrupt = self.governor.watching(interrupt)
        try:
            if self.decoder is not None:
                output: Any = self.decoder.generate(
                    self.model,
                    input_ids,
                    attention,
                    beams,
                    new_tokens,
                    min_new_tokens,
                    interrupt,
                    projection=self.projection,
                    confidence=scores,
                )
                self.tokens_generated += sum(len(row) for row in output)
            else:
                generated = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=attention,
                    num_beams=beams,
                    max_new_tokens=new_tokens,
                    min_new_tokens=min_new_tokens or None,
                    do_sample=False,
                    **confidence.generate_kwargs(scores is not None),
                )
                if scores is not None:
                    scores[:] = confidence.from_generate(self.model, generated, beams, self.tokenizer.eos_token_id)
                output = confidence.sequences(generated)
                del generated
                self.tokens_generated += int((output[:, 1:] != self.tokenizer.pad_token_id).sum())
            texts = self.tokenizer.batch_decode(output, skip_special_tokens=True, clean_up_tokenization_spaces=True)
            del output
        finally:
            # A batch's vocabulary-sized temporaries leave the heap fragmented; hand the free pages back
            # now (finished or stopped), so the next batch starts from the idle footprint and the memory
            # guard sees real use.
            self.memory.after_batch(len(batch))
        return [" ".join(text.split()) for text in texts]


def _choose_device(name: str) -> torch.device:
    if name == "cuda" or (name == "auto" and torch.cuda.is_available()):
        return torch.device("cuda")
    return torch.device("cpu")


def _cuda_dtype() -> torch.dtype:
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def describe(engine: TranslationEngine) -> dict[str, Any]:
    """What a worker reports about its model in its heartbeat."""
    return {
        **engine.identity,
        "decoding": engine.decoding,  # not in the identity: a float model's tokens are the same both ways
        "load_seconds": round(engine.load_seconds, 2),
        "resident_mb": round(engine.resident_bytes / 2**20),
    }
