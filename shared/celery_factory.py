"""The Celery app configuration both sides use: the API only sends, the worker consumes."""

from __future__ import annotations

from urllib.parse import urlsplit

from celery import Celery

from shared.routing.routes import route_for
from shared.settings import Settings
from shared.store.keys import Keys
from shared.store.redis_client import celery_tls_options, connection_options, sentinel_addresses, uses_tls

TRANSLATE_TASK = "transq.translate_job"
DOCUMENT_TASK = "transq.document_job"  # parse or render a document job (worker.documents.stage)


def make_celery(settings: Settings, name: str = "transq") -> Celery:
    """A Celery app on the broker Redis: JSON only, acknowledged after the result is stored. Its default
    queue is the route of `settings` (a worker consumes only that one; the API names each job's queue)."""
    queue = Keys(settings.key_prefix).queue(route_for(settings).key)
    app = Celery(name, broker=broker_url(settings), set_as_current=False)
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        event_serializer="json",
        task_ignore_result=True,
        task_default_queue=queue,
        # No job is acknowledged before its result is stored; a lost worker's job comes back.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_soft_time_limit=settings.task_soft_time_limit,
        task_time_limit=settings.task_time_limit,
        broker_transport_options={
            "visibility_timeout": settings.visibility_timeout,
            # Sweep for messages of dead workers often enough to honour the visibility timeout.
            "unacked_restore_interval": max(1, min(10, settings.visibility_timeout // 10)),
            "unacked_restore_throttle": 1,
            # Timeouts and TCP keepalive (shared.store.redis_client): a consumer blocked in BRPOP on a connection
            # the broker's host has lost finds out within seconds, not at kombu's own 30 s check.
            **connection_options(settings.redis_socket_timeout),
            # kombu's own check of a consumer's BRPOP: a reply overdue by BRPOP's 1 s and this is dropped
            # (its default, 25 s, let a half-open connection stall a consumer for about 51 s).
            "health_check_interval": max(1, round(settings.redis_socket_timeout)),
        },
        broker_use_ssl=celery_tls_options(settings, settings.redis_url),
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        # Loading a model in a fresh pool process takes longer than Celery's default 4 s.
        worker_proc_alive_timeout=300,
        # (each event is a PUBLISH per job and step: off unless asked for, see TRANSQ_TASK_EVENTS)
        worker_send_task_events=settings.task_events,
        task_send_sent_event=settings.task_events,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
    )
    if settings.redis_sentinels:
        app.conf.broker_transport_options.update(
            master_name=settings.redis_master,
            sentinel_kwargs=connection_options(settings.redis_socket_timeout),
        )
    return app


def broker_url(settings: Settings) -> str:
    """Celery's broker URL: TRANSQ_REDIS_URL, or one `sentinel://` URL per sentinel (kombu tries them in
    turn), carrying the URL's user, password and db; the master's name is a transport option."""
    if not settings.redis_sentinels:
        return settings.redis_url.split("?", 1)[0] if uses_tls(settings.redis_url) else settings.redis_url
    parts = urlsplit(settings.redis_url)
    credentials = parts.netloc.rpartition("@")[0]
    auth = f"{credentials}@" if credentials else ""
    db = parts.path or "/0"
    return ";".join(f"sentinel://{auth}{host}:{port}{db}" for host, port in sentinel_addresses(settings))
