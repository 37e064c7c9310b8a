"""The translation worker: a Celery app whose pool processes each hold one model."""
