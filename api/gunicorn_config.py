"""gunicorn settings of the API: `gunicorn -c python:api.gunicorn_config "api:create_app()"`.

Command-line options (--bind, --workers) override these. Read deadlines and connections per client are
TRANSQ_* settings, kept by the worker (api.server).
"""

import os
import warnings

from gevent.monkey import MonkeyPatchWarning

from shared.settings import Settings

# gunicorn has imported ssl before its gevent worker patches the standard library; gevent's warning about
# that is noise here (the API's only TLS connections, to a `rediss://` Redis, work: tests/distributed).
warnings.filterwarnings("ignore", category=MonkeyPatchWarning)

_settings = Settings.from_env()

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8080")
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
worker_class = "api.server.ApiWorker"
# Its error and access lines in TRANSQ_LOG_FORMAT (one JSON object per line when json).
logger_class = "api.gunicorn_logging.GunicornLogger"
worker_connections = int(os.environ.get("GUNICORN_CONNECTIONS", "1000"))
# Keep-alive on. The worker bounds each request's reads itself (api.connection_guard: TRANSQ_READ_TIMEOUT,
# TRANSQ_REQUEST_TIMEOUT, TRANSQ_BODY_MIN_RATE, TRANSQ_HEADER_BYTES), an idle connection's wait included.
keepalive = max(1, int(_settings.read_timeout))
# No control socket (gunicornc, gunicorn >= 25.1; older ones ignore the name): its default,
# $HOME/.gunicorn/gunicorn.ctl, cannot be made under a read-only root file system (the Kubernetes pods'), which
# gunicorn logged as an error at every start, and the API is never managed through it. GUNICORN_CONTROL_SOCKET
# names a writable path to have one.
control_socket_disable = not os.environ.get("GUNICORN_CONTROL_SOCKET")
if os.environ.get("GUNICORN_CONTROL_SOCKET"):
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]
timeout = 30
graceful_timeout = 30
# gunicorn's defaults, named here because docs/api.md documents them: a 4094-byte request line,
# 100 header fields, 8190 bytes per field. Over them: 414 / 431 in JSON (api.server).
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190
