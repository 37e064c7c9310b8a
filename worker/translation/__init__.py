"""The translation worker, a process of its own (`python -m worker.translation`, the `worker` service): a
Celery worker of concurrency 1 that holds one model and translates rounds of claimed jobs.

    model/      loading, quantising and decoding the model (never imports the rest: no broker needed)
    round/      one round: claiming jobs, planning and running batches, recording and storing outcomes
    liveness/   heartbeats, leases, sweeps, broker health, worker ids and the container healthcheck
    celery_app.py, translate_task.py, context.py, drain.py, launch.py   the process: its Celery app, its
                one task, what it holds, draining on SIGTERM, and its command
"""
