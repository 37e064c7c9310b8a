"""python -m worker.callbacks: the callback deliverer (SIGTERM/SIGINT: the callbacks in flight finish)."""

from __future__ import annotations

import logging
import signal
import sys

from shared.logging_setup import configure_logging
from shared.settings import Settings
from worker.callbacks.deliverer import Deliverer

log = logging.getLogger("transq.callbacks")


def main() -> int:
    settings = Settings.from_env()
    configure_logging(settings.log_format, settings.log_level)
    deliverer = Deliverer(settings)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: deliverer.stopping.set())
    if not settings.callback_secret:
        log.warning("callbacks are off: TRANSQ_CALLBACK_SECRET is not set (a callback_url gets 422)")
    log.info(
        "callback deliverer ready (%d at once, %d per receiver, %d per key, each attempt within %gs, deadline %ds)",
        settings.callback_concurrency,
        settings.callback_per_receiver,
        settings.callback_per_owner,
        settings.callback_timeout,
        settings.callback_deadline,
    )
    deliverer.run()
    log.info("callback deliverer stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
