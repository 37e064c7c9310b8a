"""The worker's Celery app, built from the environment when this module is imported: the target of
`celery -A worker.translation.celery_main worker --concurrency 1` (and of worker.translation.launch)."""

from worker.translation.celery_app import create_app

app = create_app()
