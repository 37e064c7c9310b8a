"""Container healthcheck of the callback deliverer: its loop ran within the last 30 seconds (it touches
worker.callbacks.deliverer.ALIVE_FILE each time round). A broker outage does not fail it: the loop goes on.

python -m worker.callbacks.healthcheck     (exit 0: alive; 1: stuck or not started)
"""

from __future__ import annotations

import sys
import time

from worker.callbacks.deliverer import ALIVE_FILE

STALE_SECONDS = 30


def main() -> int:
    try:
        age = time.time() - ALIVE_FILE.stat().st_mtime
    except OSError:
        sys.stderr.write("the deliverer has not started\n")
        return 1
    if age > STALE_SECONDS:
        sys.stderr.write(f"the deliverer's loop last ran {age:.0f}s ago\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
