"""The messages a worker sends: a new wake-up for a waiting job (it queues behind the messages already
waiting), and a translated document job to the document stage (worker.documents.stage)."""

from __future__ import annotations

from functools import cached_property

from celery import Celery

from shared.celery_factory import DOCUMENT_TASK, TRANSLATE_TASK, make_celery
from shared.routing.routes import Route
from shared.settings import Settings
from shared.store.keys import Keys

_SEND_RETRY = {"max_retries": 5, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 2}


def wake_period(settings: Settings) -> float:
    """Two leases: how long a waiting job goes unwoken before a sweep wakes it again, and how long one
    sender holds a job's wake key (JobStore.mark_woken) so that no other sends it a wake-up meanwhile."""
    return 2 * settings.lease_seconds


def wake_key_seconds(settings: Settings) -> int:
    return max(1, int(wake_period(settings)))


class Wakeups:
    def __init__(self, settings: Settings, keys: Keys, route: Route):
        self.settings, self.keys, self.route = settings, keys, route

    @cached_property
    def _producer(self) -> Celery:  # made on the first message: a worker that sends none connects nothing
        return make_celery(self.settings, name="transq-worker-wake")

    def wake(self, job_id: str) -> None:
        self._producer.send_task(TRANSLATE_TASK, args=[job_id], queue=self.keys.queue(self.route.key))

    def send_to_document_stage(self, job_id: str) -> None:
        self._producer.send_task(
            DOCUMENT_TASK, args=[job_id], queue=self.keys.documents_queue, retry=True, retry_policy=_SEND_RETRY
        )
