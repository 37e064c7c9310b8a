"""One POST of a callback: to the addresses the policy checked (shared.callback_policy), no redirects, no
retries of its own (the outbox retries), bounded by TRANSQ_CALLBACK_TIMEOUT; the answer's body is not read."""

from __future__ import annotations

import ssl
from dataclasses import dataclass

import urllib3

from shared.callback_policy import CallbackTarget


@dataclass(frozen=True)
class Answer:
    """The receiver's HTTP status (None: none came), and what went wrong ('' when it answered 2xx)."""

    status: int | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def post(target: CallbackTarget, body: bytes, headers: dict[str, str], timeout: float) -> Answer:
    """POST `body` to the target, at its first checked address, the URL's host in Host and in TLS's SNI and
    certificate check."""
    address = target.addresses[0]
    options = dict(timeout=urllib3.Timeout(connect=timeout, read=timeout), retries=False, maxsize=1)
    if target.scheme == "https":
        pool: urllib3.HTTPConnectionPool = urllib3.HTTPSConnectionPool(
            address,
            target.port,
            ssl_context=ssl.create_default_context(),
            server_hostname=target.host,
            assert_hostname=target.host,
            **options,
        )
    else:
        pool = urllib3.HTTPConnectionPool(address, target.port, **options)
    default_port = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    all_headers = {
        "Host": host if target.port == default_port else f"{host}:{target.port}",
        "Content-Type": "application/json",
        "User-Agent": "transq-callbacks",
        **headers,
    }
    try:
        with pool:
            response = pool.urlopen(
                "POST", target.path, body=body, headers=all_headers, redirect=False, preload_content=False
            )
            response.close()
    except urllib3.exceptions.HTTPError as exc:
        return Answer(None, f"{type(exc).__name__}: {exc}")
    except OSError as exc:
        return Answer(None, f"{type(exc).__name__}: {exc}")
    if 200 <= response.status < 300:
        return Answer(response.status)
    return Answer(response.status, f"the receiver answered HTTP {response.status}")
