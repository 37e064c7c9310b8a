"""A pause that lets other requests run while a request does long CPU work in a gevent process (the API).

`time.sleep(0)` does not: gevent then runs the greenlets already ready, but its hub does not poll sockets, so a
request waiting on I/O (its connection, Redis's reply) waits on. A timer, however short, sends the hub round its
loop, sockets included (bench.memory_import: another request's worst wait during a 100,000-entry import, 6 s
with sleep(0), 0.4 s with this). Outside gevent it costs its millisecond."""

from __future__ import annotations

import time

PAUSE_S = 0.001


def let_others_run() -> None:
    time.sleep(PAUSE_S)
