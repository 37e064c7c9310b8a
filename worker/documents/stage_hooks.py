"""Test-only hooks of the document stage (TRANSQ_TEST_HOOKS=1), off in production: a document whose source
holds STAGE_KILL_MARK kills the whole stage (its Celery parent, then the pool process working on it), as a
host's or a container's death would; one holding STAGE_SLEEP_MARK<n> sleeps n seconds before it is parsed
or rendered, so a test can act mid-parse. The marks are not the translation worker's
(worker.translation.fault_hooks), so the same text does not also stall or kill the workers."""

from __future__ import annotations

import logging
import os
import signal
import time

from shared.store.backends import Services
from shared.store.document_store import decompress

log = logging.getLogger(__name__)

STAGE_KILL_MARK = b"TRANSQ-STAGE-KILL"
STAGE_SLEEP_MARK = b"TRANSQ-STAGE-SLEEP"


def run_stage_hooks(services: Services, job_id: str) -> None:
    """Act on the marks in the job's stored source (a text format's: a .docx's XML is compressed)."""
    packed = services.documents.source(job_id)
    if not packed:
        return
    source = decompress(packed, services.settings.max_document_bytes * 64)
    if STAGE_KILL_MARK in source:
        log.error("test hook: killing the whole document stage (parent %d, then this process)", os.getppid())
        os.kill(os.getppid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
    if STAGE_SLEEP_MARK in source:
        digits = source.split(STAGE_SLEEP_MARK, 1)[1][:4].decode("ascii", "replace")
        seconds = int("".join(ch for ch in digits if ch.isdigit()) or 1)
        log.warning("test hook: sleeping %ds before processing job %s", seconds, job_id)
        time.sleep(seconds)
