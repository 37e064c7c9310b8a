"""The callback deliverer: POSTs a final job's view, signed, to the job's `callback_url`, retried with backoff
until TRANSQ_CALLBACK_DEADLINE (`python -m worker.callbacks`). A process of its own, beside the Celery
worker: it never imports torch (nor the worker's model or scheduling), so it runs in a small container, can
be killed and restarted alone, and leaves the model's process its whole memory cap."""
