"""The translation worker, a process of its own (`python -m worker.translation`, the `worker` service): a
Celery worker of concurrency 1 that holds one model and translates rounds of claimed jobs.

    model/      loading, quantising and decoding the model (never imports the rest: no broker needed)
    round/      one round: claiming jobs, planning and running batches, recording and storing outcomes
    liveness/   heartbeats, sweeps, broker health, worker ids and the container healthcheck
    the process: its command (launch.py, __main__.py), its Celery app (celery_app.py; celery_main.py, the
                one module that builds something when imported: the app `celery -A` loads), its one task
                (translate_task.py), what it holds (process_parts.py), draining on SIGTERM (drain.py),
                and the test-only fault hooks (fault_hooks.py); its broker transport is shared.broker_transport
"""
