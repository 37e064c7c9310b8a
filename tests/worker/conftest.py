"""The engine over the tiny test model, as the worker tests use it."""

import pytest

from shared.settings import Settings


@pytest.fixture(scope="module")
def engine(model_dir):
    from worker.engine import TranslationEngine

    return TranslationEngine(Settings(model=str(model_dir), max_new_tokens=6, max_input_tokens=16))
