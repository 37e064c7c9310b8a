"""A worker process's heartbeat: every TRANSQ_HEARTBEAT_SECONDS, from a background thread, it reports
readiness (model loaded) and whether a round runs (the API's per-route gauges, which autoscalers read),
sweeps its route (worker.translation.liveness.wakeups.Sweeps), and gives up when the consumer no longer
consumes (worker.translation.liveness.consumer_watch). A broker outage is recorded, and the beat goes on."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from shared.routing.routes import Route
from shared.settings import Settings
from shared.store.workers import WorkerRegistry
from worker.translation.liveness.activity import Activity
from worker.translation.liveness.broker_health import BrokerHealth
from worker.translation.liveness.consumer_watch import ConsumerWatch
from worker.translation.liveness.wakeups import Sweeps
from worker.translation.liveness.worker_id import write_id_file

log = logging.getLogger(__name__)


class Heartbeat:
    """Made once the model is loaded: `namespace` is its translations' cache namespace, which the registry
    publishes for the route."""

    def __init__(
        self,
        settings: Settings,
        registry: WorkerRegistry,
        worker_id: str,
        route: Route,
        namespace: str,
        activity: Activity,
        broker: BrokerHealth,
        sweeps: Sweeps,
        watch: ConsumerWatch,
    ):
        self.settings = settings
        self.registry, self.worker_id, self.route, self.namespace = registry, worker_id, route, namespace
        self.activity, self.broker, self.sweeps, self.watch = activity, broker, sweeps, watch
        self._stop = threading.Event()

    def start(self, info: dict[str, Any]) -> None:
        """Start beating with `info` (what the worker says of its model) in every beat."""
        info = {**info, "pid": os.getpid()}
        write_id_file(self.settings, self.worker_id)  # for the container health check
        threading.Thread(target=self._run, args=(info,), name="heartbeat", daemon=True).start()

    def beat(self, info: dict[str, Any]) -> bool:
        """One beat; False when the worker gives up (its consumer stalled)."""
        activity = self.activity
        now = {**info, "busy": activity.busy, "running_jobs": activity.running_jobs}
        self.registry.beat(self.worker_id, now, self.route, self.namespace)
        self.sweeps.wake_lapsed_jobs()
        self.sweeps.wake_forgotten_jobs()
        if self.watch.stalled(activity.idle_since, activity.busy):
            self.stop()  # the health check fails from now on
            self.watch.give_up()
            return False
        return True

    def _run(self, info: dict[str, Any]) -> None:
        while True:
            try:
                if not self.beat(info):
                    return
            except Exception as exc:  # noqa: BLE001 - keep beating through broker outages
                self.broker.saw_trouble()
                log.warning("heartbeat failed: %s", exc)
            if self._stop.wait(self.settings.heartbeat_seconds):
                return

    def stop(self) -> None:
        self._stop.set()
        try:
            self.registry.leave(self.worker_id)
        except Exception as exc:  # noqa: BLE001
            log.warning("could not deregister: %s", exc)
