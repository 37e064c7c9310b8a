"""Running transq's real processes on one machine (a private redis-server, gunicorn, Celery workers): used by
`transq dev`, the tests and the benchmarks."""
