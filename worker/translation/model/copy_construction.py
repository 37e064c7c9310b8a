"""The copy model's weights, constructed rather than trained: its "translation" of any text is that text.

A one-layer Marian model whose attention aligns by position. Marian adds a fixed sinusoid to every
token embedding (frequency k in dimension k as a sine and in d_model/2 + k as a cosine); the dot
product of two positions' highest K frequencies is largest, by a margin of at least 3.2 up to position
512, where the positions are equal. So:

- dimensions S (the K highest frequencies) carry the position and nothing else; dimensions N get -S
  from the first self-attention, so a hidden state sums to zero there and has the same norm at every
  position (LayerNorm then scales every position alike); the rest, C, carry the token: a balanced
  +-1 code per piece (tokens are told apart by their codes' dot products; the sinusoid's share of C is
  noise well below that margin);
- each self-attention attends to its own position (query and key: S) and writes -S into N (the
  decoder's also clears C, the previous output token);
- the decoder's cross-attention attends to the encoder position equal to its own (query and key:
  S and N, which sum to zero, so LayerNorm's mean drops out) and copies that position's C;
- the output layer is the embedding (tied), so the largest logit is the piece whose code that is: the
  source's piece at that position, then its </s>. The feed-forward layers are zero.

Every weight matrix holds one value and zeros, so int8 quantization keeps it exact. Building takes a
second or two of CPU; tests/worker/translation/model/test_offline_model.py checks exact copies of text it never saw.
"""

from __future__ import annotations

import math

import torch

POSITION_FREQUENCIES = 16  # K: the margin between a position and its neighbours is 3.2 (at distance 1)
CODE_SEED = 20261203
ALIGN = 40.0  # the attention logits' scale: each position's neighbours get about e^-30 of its weight
# The output layer's scale: the copied piece's logit is about 14, the others' scatter around 0 (their codes'
# dot products), so it is always the choice (greedy or beam), with a probability of about 0.998: confidence
# scores (mean log-probabilities) near -0.002, never under TRANSQ_LOW_CONFIDENCE's -1, a little different
# from sentence to sentence. Not sharper: at 4 every score was 0.0 in float32. Not flatter: int8 quantizes
# a batch's activations with one scale, so a sentence's logits move a little with its batch neighbours
# (about 0.04), and at 1.15 (probability 0.86) its score moved by up to 0.0035 (here about 0.0001).
SHARPNESS = 1.8


def dimensions(d_model: int) -> tuple[list[int], list[int], list[int]]:
    """S (position), N (its negation), C (the token): disjoint, covering d_model."""
    half, k = d_model // 2, POSITION_FREQUENCIES
    position = list(range(k)) + [half + i for i in range(k)]
    negated = [k + i for i in range(k)] + [half + k + i for i in range(k)]
    taken = set(position) | set(negated)
    return position, negated, [i for i in range(d_model) if i not in taken]


def codes(vocabulary: int, width: int) -> torch.Tensor:
    """A balanced +-1 code per piece (each sums to zero, so LayerNorm's mean never shifts a logit)."""
    generator = torch.Generator().manual_seed(CODE_SEED)
    signs = torch.ones(vocabulary, width)
    signs[:, width // 2 :] = -1
    order = torch.argsort(torch.rand(vocabulary, width, generator=generator), dim=1)
    return torch.gather(signs, 1, order)


def _attention(attention, d_model: int, query: list[int], key: list[int], scale: float) -> None:  # type: ignore[no-untyped-def]
    for projection in (attention.q_proj, attention.k_proj, attention.v_proj, attention.out_proj):
        projection.weight.zero_()
        projection.bias.zero_()
    attention.q_proj.weight[query, query] = scale
    attention.k_proj.weight[key, key] = 1.0
    attention.v_proj.weight[range(d_model), range(d_model)] = 1.0


def _own_position(attention, d_model: int, position: list[int], negated: list[int], clear: list[int]) -> None:  # type: ignore[no-untyped-def]
    """Attend to the same position; write -S into N (replacing what N held) and clear `clear`."""
    head = attention.q_proj.weight.shape[0] // max(1, getattr(attention, "num_heads", 1))
    _attention(attention, d_model, position, position, ALIGN * math.sqrt(head) / 4)
    out = attention.out_proj.weight
    out[negated, negated] = -1.0
    out[negated, position] = -1.0
    out[clear, clear] = -1.0


def _zero_feed_forward(layer) -> None:  # type: ignore[no-untyped-def]
    for projection in (layer.fc1, layer.fc2):
        projection.weight.zero_()
        projection.bias.zero_()


def construct_copy_model(model) -> None:  # type: ignore[no-untyped-def]
    """Set the weights of a one-layer, one-head MarianMTModel (tied embeddings) so that it copies."""
    config = model.config
    d_model = config.d_model
    position, negated, token = dimensions(d_model)
    with torch.no_grad():
        embedding = torch.zeros(config.vocab_size, d_model)
        embedding[:, token] = codes(config.vocab_size, len(token)) / math.sqrt(d_model)  # +-1 after embed_scale
        embedding[config.pad_token_id] = 0.0  # the decoder's start: its token is cleared anyway
        model.model.shared.weight.copy_(embedding)
        model.final_logits_bias.zero_()
        (encoder,) = model.model.encoder.layers
        (decoder,) = model.model.decoder.layers
        _own_position(encoder.self_attn, d_model, position, negated, clear=[])
        _own_position(decoder.self_attn, d_model, position, negated, clear=token)
        cross = decoder.encoder_attn
        head = cross.q_proj.weight.shape[0]
        _attention(cross, d_model, position + negated, position + negated, ALIGN * math.sqrt(head) / 4)
        cross.v_proj.weight.zero_()
        cross.v_proj.weight[token, token] = 1.0
        cross.out_proj.weight[token, token] = 1.0
        for layer in (encoder, decoder):
            _zero_feed_forward(layer)
            for norm in (m for m in layer.modules() if isinstance(m, torch.nn.LayerNorm)):
                norm.weight.fill_(1.0)
                norm.bias.zero_()
        decoder.final_layer_norm.weight[token] = SHARPNESS
