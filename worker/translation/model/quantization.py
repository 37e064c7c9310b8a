"""Dynamic int8 quantization that keeps peak memory low.

`from_pretrained` memory-maps the safetensors file, so the fp32 weights are file
pages. Each Linear layer is swapped for its int8 version one at a time and the
file pages behind its fp32 weight are dropped (madvise MADV_DONTNEED) at once,
so the full fp32 model and its int8 copy are never resident together. Only pages
of file-backed mappings are ever dropped: they fault back in from the file if
read again, whereas dropping anonymous memory would zero it.
"""

from __future__ import annotations

import ctypes
import logging
import mmap
import warnings
from bisect import bisect_right
from typing import Any

import torch

from worker.translation.model.heap import release_freed_memory

log = logging.getLogger(__name__)
_MADV_DONTNEED = 4
CHUNK_ROWS = 4096  # rows of a weight read and quantized at a time (8 MiB of a 512-wide fp32 table)


class FileMappings:
    """The file-backed address ranges of this process, from /proc/self/maps."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []
        try:
            with open("/proc/self/maps") as maps:
                for line in maps:
                    fields = line.split(maxsplit=5)
                    path = fields[5].strip() if len(fields) == 6 else ""
                    if path.startswith("/") and not path.endswith("(deleted)"):
                        start, end = (int(x, 16) for x in fields[0].split("-"))
                        self.ranges.append((start, end))
        except OSError:
            pass
        self.ranges.sort()
        self._starts = [r[0] for r in self.ranges]

    def contains(self, start: int, end: int) -> bool:
        i = bisect_right(self._starts, start) - 1
        return i >= 0 and self.ranges[i][0] <= start and end <= self.ranges[i][1]


def release_file_pages(tensor: torch.Tensor, mappings: FileMappings) -> int:
    """Drop the resident file pages behind `tensor`'s storage; returns bytes released (0 if not file-backed)."""
    storage = tensor.untyped_storage()
    if tensor.device.type != "cpu":
        return 0
    return release_file_range(storage.data_ptr(), storage.nbytes(), mappings)


def release_file_range(start: int, size: int, mappings: FileMappings) -> int:
    """Drop the resident file pages wholly inside [start, start + size) of a file-backed mapping."""
    if size == 0 or not mappings.contains(start, start + size):
        return 0
    page = mmap.PAGESIZE
    first, last = -(-start // page) * page, (start + size) // page * page
    if last <= first:
        return 0
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return (last - first) if libc.madvise(first, last - first, _MADV_DONTNEED) == 0 else 0


def quantize_int8(model: torch.nn.Module) -> int:
    """Replace every nn.Linear by a dynamic int8 Linear and every token nn.Embedding by an 8-bit
    (per-row) Embedding, in place; returns the number of modules replaced.

    Modules tied to one weight (Marian's encoder, decoder and `shared` embeddings are three modules
    over one table) get one quantized copy, shared the same way, so the fp32 table is freed.
    """
    qconfigs = {
        torch.nn.Linear: torch.ao.quantization.default_dynamic_qconfig,
        torch.nn.Embedding: torch.ao.quantization.float_qparams_weight_only_qconfig,
    }
    mappings = FileMappings()
    replacements: dict[tuple[type, int], torch.nn.Module] = {}
    released = 0
    with warnings.catch_warnings():
        # torch.ao quantization is deprecated upstream yet is the fast CPU path today (see DESIGN.md).
        warnings.simplefilter("ignore")
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                # Exact types only: sinusoidal position tables subclass nn.Embedding and stay as they are.
                if type(child) not in qconfigs:
                    continue
                key = (type(child), id(child.weight))
                if key not in replacements:
                    replacements[key] = _quantized_module(child, qconfigs[type(child)], mappings)
                    released += release_file_pages(child.weight, mappings)
                setattr(parent, name, replacements[key])
    for tensor in list(model.parameters()) + list(model.buffers()):
        released += release_file_pages(tensor, mappings)
    # The replaced fp32 weights (those from_pretrained copied) go back to the system now, before the engine
    # cuts the output layer (OutputProjection.restricted): the load's peak is not both at once.
    release_freed_memory()
    log.debug("quantized %d modules; released %.0f MiB of file pages", len(replacements), released / 2**20)
    return len(replacements)


def _quantized_module(module: torch.nn.Module, qconfig: Any, mappings: FileMappings) -> torch.nn.Module:
    """torch's `from_float` of a Linear (dynamic int8) or an Embedding (8-bit, per row), bit for bit, with
    the weight read and quantized CHUNK_ROWS rows at a time, each chunk's file pages dropped once it is
    quantized: torch's own reads the whole fp32 weight into memory and makes full-size temporaries (the
    65,001 x 512 tied table: +127 MiB of fp32 pages and +190 MiB in all at the load's peak)."""
    from torch.ao.nn.quantized import Embedding as QuantizedEmbedding

    weight = module.weight.detach()
    if weight.dtype != torch.float32 or not weight.is_contiguous():
        weight = weight.float().contiguous()
    quantized = _quantized_rows(weight, qconfig.weight, mappings)
    if isinstance(module, torch.nn.Embedding):
        embedding = QuantizedEmbedding(module.num_embeddings, module.embedding_dim)
        embedding.set_weight(quantized)
        return embedding
    return int8_linear(quantized, module.bias)


def _quantized_rows(weight: torch.Tensor, make_observer: Any, mappings: FileMappings) -> torch.Tensor:
    """`_quantize_weight(weight, observer)` as torch's from_float computes it, chunk by chunk. Per-row
    quantization (ch_axis 0) observes each chunk on its own (a row's scale is its own min/max); per-tensor
    first observes every chunk (the observer keeps the running min/max, so the scale is the whole
    weight's), then quantizes each with that scale. Quantizing and clamping are elementwise: the integers
    are the same whichever chunks they are computed in."""
    from torch.ao.nn.quantized.modules.utils import _quantize_weight

    observer = make_observer()
    per_row = observer.qscheme == torch.per_channel_affine_float_qparams and observer.ch_axis == 0
    if not per_row and observer.qscheme not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        raise ValueError(f"unexpected weight quantization scheme {observer.qscheme}")
    chunks = [weight[i : i + CHUNK_ROWS] for i in range(0, weight.shape[0], CHUNK_ROWS)]
    row_bytes = weight.shape[1] * weight.element_size() if weight.dim() == 2 else 0
    if not per_row:
        for chunk in chunks:
            observer(chunk)
            release_file_range(chunk.data_ptr(), chunk.shape[0] * row_bytes, mappings)
    integers, scales, zero_points = None, [], []
    for start, chunk in zip(range(0, weight.shape[0], CHUNK_ROWS), chunks):
        chunk_observer = make_observer() if per_row else observer
        if per_row:
            chunk_observer(chunk)
        part = _quantize_weight(chunk, chunk_observer)
        if integers is None:
            integers = torch.empty(weight.shape, dtype=part.int_repr().dtype)
        integers[start : start + chunk.shape[0]] = part.int_repr()
        if per_row:
            scales.append(part.q_per_channel_scales())
            zero_points.append(part.q_per_channel_zero_points())
        else:
            scale, zero_point = part.q_scale(), part.q_zero_point()
        release_file_range(chunk.data_ptr(), chunk.shape[0] * row_bytes, mappings)
    if per_row:
        return torch._make_per_channel_quantized_tensor(integers, torch.cat(scales), torch.cat(zero_points), 0)
    return torch._make_per_tensor_quantized_tensor(integers, scale, zero_point)


def is_int8_linear(layer: Any) -> bool:
    """Whether a layer is a dynamic int8 Linear (as quantize_int8 makes them)."""
    from torch.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear

    return isinstance(layer, DynamicQuantizedLinear)


def is_int8(model: Any) -> bool:
    """Whether the model's Linear layers are dynamic int8 ones (quantize_int8 converts all or none)."""
    return is_int8_linear(model.get_encoder().layers[0].fc1)


def int8_linear(weight: torch.Tensor, bias: torch.Tensor | None) -> torch.nn.Module:
    """A dynamic int8 Linear over this quantized (qint8) out x in weight and float bias."""
    from torch.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao is deprecated upstream, yet the fast CPU path (DESIGN.md)
        layer = DynamicQuantizedLinear(weight.shape[1], weight.shape[0], dtype=torch.qint8)
    layer.set_weight_bias(weight, bias)
    return layer
