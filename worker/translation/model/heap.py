"""The worker's heap: freed pages handed back to the system after a batch or after quantization (glibc's
malloc_trim), and its memory trail in the logs (after imports, after the model's load, each batch's peak)."""

from __future__ import annotations

import ctypes
import gc
import logging
from functools import cache
from typing import Any

from shared.memory import peak_rss_bytes, process_rss_bytes

log = logging.getLogger(__name__)
MIB = 2**20


@cache
def _libc() -> Any:
    """glibc, loaded on the first trim (None elsewhere)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc only: musl and others have no malloc_trim
        return libc
    except (OSError, AttributeError):
        return None


def trim_heap() -> None:
    """Return free heap pages to the system (a no-op without glibc)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)


def release_freed_memory() -> None:
    """Give the fp32 weights that quantization replaced back to the system."""
    gc.collect()
    trim_heap()


class MemoryTrail:
    """Resident memory at the engine's milestones, logged: after the imports, after the load, and after
    each batch (its RSS once freed pages are handed back, and the process's peak, at INFO when the batch
    raised it). The peak is VmHWM, never reset: benchmarks and the memory guard read the same number."""

    def __init__(self) -> None:
        self.imports_bytes = process_rss_bytes()
        self.peak_bytes = peak_rss_bytes()
        log.info("memory: %.0f MiB resident after imports, before the model", self.imports_bytes / MIB)

    def loaded(self) -> int:
        """RSS once the model is loaded (the load's peak logged with it)."""
        resident, self.peak_bytes = process_rss_bytes(), peak_rss_bytes()
        log.info("memory: %.0f MiB resident after load (peak %.0f MiB)", resident / MIB, self.peak_bytes / MIB)
        return resident

    def after_batch(self, sentences: int) -> None:
        """Hand free pages back, then log the batch's mark."""
        peak = peak_rss_bytes()
        trim_heap()
        raised, self.peak_bytes = peak > self.peak_bytes, max(peak, self.peak_bytes)
        log.log(
            logging.INFO if raised else logging.DEBUG,
            "memory: batch of %d sentence(s): %.0f MiB resident after it, peak %.0f MiB%s",
            sentences,
            process_rss_bytes() / MIB,
            peak / MIB,
            " (raised by this batch)" if raised else "",
        )
