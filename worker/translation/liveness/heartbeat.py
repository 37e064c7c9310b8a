"""A worker process's heartbeat: every TRANSQ_HEARTBEAT_SECONDS, from a background thread, it reports
readiness (model loaded) and whether a round runs (the API's per-route gauges, which autoscalers read),
sweeps its route (worker.translation.liveness.sweeps), and gives up when the consumer no longer consumes
(worker.translation.liveness.consumer_watch). A broker outage is recorded, and the beat goes on."""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from worker.translation.liveness.consumer_watch import ConsumerWatch
from worker.translation.liveness.sweeps import wake_forgotten_jobs, wake_lapsed_jobs
from worker.translation.liveness.worker_id import write_id_file

if TYPE_CHECKING:
    from worker.translation.context import WorkerContext

log = logging.getLogger(__name__)


class Heartbeat:
    def __init__(self, ctx: WorkerContext):
        self.ctx = ctx
        self._stop = threading.Event()

    def start(self, info: dict[str, Any]) -> None:
        """Start beating with `info` (what the worker says of its model) in every beat."""
        info = {**info, "pid": os.getpid()}
        write_id_file(self.ctx.settings, self.ctx.worker_id)  # for the container health check
        threading.Thread(target=self._run, args=(info,), name="heartbeat", daemon=True).start()

    def beat(self, info: dict[str, Any], watch: ConsumerWatch) -> bool:
        """One beat; False when the worker gives up (its consumer stalled)."""
        ctx, activity = self.ctx, self.ctx.activity
        now = {**info, "busy": activity.busy, "running_jobs": activity.running_jobs}
        ctx.registry.beat(ctx.worker_id, now, ctx.route, ctx.namespace)
        wake_lapsed_jobs(ctx)
        wake_forgotten_jobs(ctx)
        if watch.stalled(activity.idle_since, activity.busy):
            self.stop()  # the health check fails from now on
            watch.give_up()
            return False
        return True

    def _run(self, info: dict[str, Any]) -> None:
        watch = ConsumerWatch(self.ctx)
        while True:
            try:
                if not self.beat(info, watch):
                    return
            except Exception as exc:  # noqa: BLE001 - keep beating through broker outages
                self.ctx.broker.saw_trouble()
                log.warning("heartbeat failed: %s", exc)
            if self._stop.wait(self.ctx.settings.heartbeat_seconds):
                return

    def stop(self) -> None:
        self._stop.set()
        try:
            self.ctx.registry.leave(self.ctx.worker_id)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not deregister: %s", exc)
