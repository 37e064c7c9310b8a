"""The floor for the cached path: a bare Flask + redis-py endpoint doing only the same MGET.

gunicorn "bench.bare_app:create_app()"   (BARE_CACHE_URL, BARE_NAMESPACE from the environment)
"""

from __future__ import annotations

import os

import redis
from flask import Flask, jsonify, request

from shared.store.sentence_cache import sentence_digest


def create_app() -> Flask:
    app = Flask(__name__)
    client = redis.Redis.from_url(os.environ["BARE_CACHE_URL"], decode_responses=True)
    namespace = os.environ["BARE_NAMESPACE"]

    @app.get("/healthz")
    def healthz():  # type: ignore[no-untyped-def]
        return {"status": "ok"}

    @app.post("/bare")
    def bare():  # type: ignore[no-untyped-def]
        texts = request.get_json()["texts"]
        found = client.mget([f"transq:c:{namespace}:{sentence_digest(t)}" for t in texts])
        return jsonify(translations=found)

    return app
