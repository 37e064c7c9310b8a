"""Test-only hooks (TRANSQ_TEST_HOOKS=1), off in production: a sentence holding POISON_MARK kills the
worker process; a batch holding a sentence with SLEEP_MARK<n> sleeps n seconds before it runs."""

from __future__ import annotations

import logging
import os
import signal
import time

log = logging.getLogger(__name__)

POISON_MARK = "TRANSQ-POISON"
SLEEP_MARK = "TRANSQ-SLEEP"


def run_fault_hooks(sentences: list[str]) -> None:
    """Act on the marks in one batch's sentences."""
    seconds = 0
    for sentence in sentences:
        if POISON_MARK in sentence:
            log.error("test hook: poison sentence, killing this worker process")
            os.kill(os.getpid(), signal.SIGKILL)
        if SLEEP_MARK in sentence:
            digits = "".join(ch for ch in sentence.split(SLEEP_MARK, 1)[1][:4] if ch.isdigit())
            seconds = max(seconds, int(digits or 1))
    time.sleep(seconds)
