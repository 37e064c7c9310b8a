"""Marian's decoder, one step at a time, over preallocated key/value caches.

transformers' decoder step builds two attention masks, looks up positions, and in every layer appends
this step's keys and values to a DynamicCache by `torch.cat` (a copy of the whole cache, per layer, per
step) and routes the attention through its interface registry. This step does the same arithmetic on the
same modules (the model's own Linear, LayerNorm and embedding layers, int8 or not) with less around it:

- self-attention keys and values are written into a buffer sized for the longest output, and attention
  reads the filled part (a view, no copy);
- cross-attention keys and values are computed once per batch, from the encoder's states, and only
  shrink when sentences leave;
- attention is torch's scaled_dot_product_attention, called with the arguments transformers' "sdpa"
  attention passes it, so a float model's logits are the same (tests/worker/translation/model/test_decoding.py compares
  tokens with generate(); tests/worker/translation/model/test_decoding_kernels.py the logits with transformers' cache).
- an int8 model's beams share their sentence's cross-attention keys and values (one query block per
  sentence: its logits equal a copy per beam to float rounding); its numbers already depend on which rows
  share a batch (dynamic int8 quantizes each product's input over the whole batch).

It serves post-norm Marian decoders with transformers' "sdpa" attention (opus-mt's); `FusedSteps.fits`
says whether a model is one, and decoder_steps.DecoderSteps serves any other.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch.nn.functional import scaled_dot_product_attention

from worker.translation.model.batching import BatchInterrupted
from worker.translation.model.fused_projections import fused_qkv
from worker.translation.model.output_projection import OutputProjection
from worker.translation.model.quantization import is_int8


class FusedSteps:
    """One decoder step at a time; returns float32 logits the caller may overwrite."""

    @staticmethod
    def fits(model: Any) -> bool:
        """Whether this model's decoder is one these steps reproduce (Marian, post-norm, sdpa attention)."""
        config = model.config
        return (
            config.model_type == "marian"
            and not getattr(config, "normalize_before", False)
            and getattr(config, "_attn_implementation", None) == "sdpa"
            and getattr(model.get_decoder(), "layernorm_embedding", None) is None
        )

    def __init__(
        self,
        model: Any,
        encoder_hidden: torch.Tensor,
        attention_mask: torch.Tensor,
        max_steps: int,
        interrupt: Callable[[], bool] | None = None,
        projection: OutputProjection | None = None,
        beams: int = 1,
    ):
        """`encoder_hidden`, `attention_mask`: one row per sentence; each sentence decodes in `beams` rows."""
        decoder = model.get_decoder()
        self.layers = list(decoder.layers)
        self.qkv = [fused_qkv(layer.self_attn) for layer in self.layers]
        self.embed_tokens = decoder.embed_tokens
        self.embed_scale = decoder.embed_scale
        self.positions = decoder.embed_positions.weight
        self.interrupt = interrupt
        self.device = attention_mask.device
        self.projection = projection or OutputProjection.full(model)
        attention = self.layers[0].self_attn
        self.heads, self.head_dim = attention.num_heads, attention.head_dim
        self.scaling = attention.scaling
        # An int8 model's beams share their sentence's cross-attention keys and values (a quarter of the
        # memory read at beam 4); a float model's rows each keep a copy, as transformers' (bit-identical).
        self.beams = beams if beams > 1 and is_int8(model) else 1
        if beams > 1 and self.beams == 1:
            encoder_hidden = encoder_hidden.repeat_interleave(beams, dim=0)
            attention_mask = attention_mask.repeat_interleave(beams, dim=0)
        rows = encoder_hidden.shape[0] * self.beams
        # transformers' bidirectional mask for sdpa: none where no row is padded, else True where attended
        self.cross_mask = None if bool(attention_mask.all()) else attention_mask.bool()[:, None, None, :]
        self.cross = [self._split(layer.encoder_attn.k_proj(encoder_hidden)) for layer in self.layers]
        self.cross_values = [self._split(layer.encoder_attn.v_proj(encoder_hidden)) for layer in self.layers]
        shape = (rows, self.heads, max_steps, self.head_dim)
        dtype = self.cross[0].dtype
        self.keys = [torch.empty(shape, dtype=dtype, device=self.device) for _ in self.layers]
        self.values = [torch.empty(shape, dtype=dtype, device=self.device) for _ in self.layers]
        self.spare: list[torch.Tensor] = []  # keep_rows' second set of buffers, made on first use
        self.step = 0

    def _split(self, states: torch.Tensor) -> torch.Tensor:
        """rows x length x d_model -> rows x heads x length x head_dim (a view, as transformers makes it)."""
        return states.view(states.shape[0], states.shape[1], self.heads, self.head_dim).transpose(1, 2)

    def __call__(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.interrupt is not None and self.interrupt():
            raise BatchInterrupted()
        t = self.step
        hidden = self.embed_tokens(tokens.contiguous()) * self.embed_scale + self.positions[t : t + 1]
        for i, layer in enumerate(self.layers):
            attention = layer.self_attn
            if self.qkv[i] is not None:
                query, key, value = self.qkv[i](hidden).chunk(3, dim=-1)
            else:
                query, key, value = attention.q_proj(hidden), attention.k_proj(hidden), attention.v_proj(hidden)
            query = self._split(query.contiguous())
            self.keys[i][:, :, t : t + 1] = self._split(key)
            self.values[i][:, :, t : t + 1] = self._split(value)
            keys, values = self.keys[i][:, :, : t + 1], self.values[i][:, :, : t + 1]
            out = scaled_dot_product_attention(query, keys, values, scale=self.scaling)
            hidden = layer.self_attn_layer_norm(hidden + attention.out_proj(self._merge(out)))
            attention = layer.encoder_attn
            hidden = layer.encoder_attn_layer_norm(
                hidden + attention.out_proj(self._cross_attention(i, attention, hidden))
            )
            hidden = layer.final_layer_norm(hidden + layer.fc2(layer.activation_fn(layer.fc1(hidden))))
        self.step = t + 1
        return self.projection(hidden[:, -1, :])

    def _cross_attention(self, i: int, attention: Any, hidden: torch.Tensor) -> torch.Tensor:
        """Layer i's cross-attention of the rows' states, merged (rows x 1 x d_model); where beams share
        their sentence's keys and values, a sentence's beams are its queries."""
        keys, values, mask = self.cross[i], self.cross_values[i], self.cross_mask
        if self.beams == 1:
            query = self._split(attention.q_proj(hidden))
            return self._merge(scaled_dot_product_attention(query, keys, values, attn_mask=mask, scale=self.scaling))
        rows = hidden.shape[0]
        query = attention.q_proj(hidden).view(rows // self.beams, self.beams, self.heads, self.head_dim).transpose(1, 2)
        out = scaled_dot_product_attention(query, keys, values, attn_mask=mask, scale=self.scaling)
        return out.transpose(1, 2).reshape(rows, 1, -1)

    @staticmethod
    def _merge(out: torch.Tensor) -> torch.Tensor:
        """rows x heads x 1 x head_dim -> rows x 1 x d_model, contiguous (as transformers' sdpa attention)."""
        return out.transpose(1, 2).contiguous().reshape(out.shape[0], 1, -1)

    def keep_rows(self, rows: torch.Tensor) -> None:
        """Continue from these rows' decoder states (beams stay within their sentence, whose
        cross-attention rows are copies of one encoder output: only the self-attention caches move).
        Only rows whose state changes are copied, where they are at most half; else the filled steps are
        gathered straight into a second buffer of the same shape, which takes the first's place: one copy,
        not a gather and a copy back (only the pages written count in RSS)."""
        moved, sources = _moved(rows)
        if 2 * len(moved) <= len(rows):
            for buffer in self.keys + self.values:
                _copy_rows(buffer[:, :, : self.step], moved, sources)
            return
        if not self.spare:
            self.spare = [torch.empty_like(buffer) for buffer in self.keys + self.values]
        filled, layers = self.step, len(self.keys)
        for i, buffer in enumerate(self.keys + self.values):
            torch.index_select(buffer[:, :, :filled], 0, rows, out=self.spare[i][:, :, :filled])
        self.keys, self.values, self.spare = self.spare[:layers], self.spare[layers:], self.keys + self.values

    def select_rows(self, rows: torch.Tensor) -> None:
        """Keep only these rows, in this order (the others' sentences are done): the rows that change
        place are copied within the buffers, which then end at the last row kept. `compacting_order`
        gives an order that moves only as many rows as left, from the end into their places."""
        kept = len(rows)
        moved, sources = _moved(rows)
        for buffer in self.keys + self.values:
            _copy_rows(buffer[:, :, : self.step], moved, sources)
        self.keys, self.values = [b[:kept] for b in self.keys], [b[:kept] for b in self.values]
        self.spare = []
        if self.beams > 1:  # whole sentences leave: the sentence of each kept group of beams
            rows = rows.view(-1, self.beams)[:, 0] // self.beams
            kept = len(rows)
            moved, sources = _moved(rows)
        for tensor in self.cross + self.cross_values:
            _copy_rows(tensor, moved, sources)
        self.cross, self.cross_values = [k[:kept] for k in self.cross], [v[:kept] for v in self.cross_values]
        if self.cross_mask is not None:
            self.cross_mask = self.cross_mask.index_select(0, rows)


def compacting_order(keep: torch.Tensor) -> torch.Tensor:
    """The rows to keep (`keep`: a bool per row) in an order that moves fewest: rows already among the
    first len(kept) positions stay where they are, and the kept rows beyond fill the places of those
    that leave."""
    kept = keep.nonzero()[:, 0]
    order = torch.arange(len(kept), device=keep.device)
    holes = (~keep[: len(kept)]).nonzero()[:, 0]
    order[holes] = kept[kept >= len(kept)]
    return order


def _moved(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Of a new row order (`rows[i]`: the row that goes to place i), the places whose row changes and
    the rows that go there."""
    moved = (rows != torch.arange(len(rows), device=rows.device)).nonzero()[:, 0]
    return moved, rows[moved]


def _copy_rows(tensor: torch.Tensor, into: torch.Tensor, sources: torch.Tensor) -> None:
    """tensor[into[i]] = tensor[sources[i]] for every i, read before any is written."""
    if len(into):
        tensor.index_copy_(0, into, tensor.index_select(0, sources))
