"""The scheduling tests' worker context: a real Redis and the tiny test model."""

import pytest

from tests.worker.translation.scheduling.worker_jobs import make_context


@pytest.fixture
def context(model_dir, redis_server):
    return make_context(model_dir, redis_server)
