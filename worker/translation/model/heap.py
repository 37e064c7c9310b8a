"""Handing freed heap pages back to the system after a batch or after quantization (glibc's malloc_trim)."""

from __future__ import annotations

import ctypes
import gc
from functools import cache
from typing import Any


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
