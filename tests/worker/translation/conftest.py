"""The round and liveness tests' worker process parts: a real Redis and the tiny test model."""

import pytest

from tests.worker.translation.worker_jobs import make_parts


@pytest.fixture
def parts(model_dir, redis_server):
    return make_parts(model_dir, redis_server)
