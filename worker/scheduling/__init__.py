"""The scheduling: the Celery worker, its rounds of claimed jobs, leases, heartbeats and broker health."""
