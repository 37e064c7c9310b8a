"""api.connection_guard on a socket pair: the head handed on whole and within its byte limit, deadlines for
an idle connection, a trickled head and a trickled body, and bytes read ahead kept for the next request.
(tests/reliability/test_slow_requests.py puts it under attack in the real server.)"""

from __future__ import annotations

import socket
import time

import pytest
from gunicorn.http.errors import LimitRequestHeaders

from api.connection_guard import BodyTimeout, GuardedSocket, HeadTimeout, ReadLimits

HEAD = b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n"


def guarded(**limits: float) -> tuple[GuardedSocket, socket.socket]:
    values = dict(
        head_timeout=0.3, head_bytes=1024, request_timeout=5.0, body_min_rate=100.0, send_timeout=1.0, drain_bytes=64
    )
    server, client = socket.socketpair()
    return GuardedSocket(server, ReadLimits(**{**values, **limits})), client


class Request:
    closing = False

    def force_close(self) -> None:
        self.closing = True


def test_a_head_sent_in_pieces_is_handed_on_whole():
    sock, client = guarded()
    for i in range(len(HEAD)):
        client.send(HEAD[i : i + 1])
    client.send(b"0123456789")
    received = sock.recv(8192)
    assert received.startswith(HEAD)  # one piece, however it arrived


def test_the_byte_limit_counts_the_head_not_what_follows_it():
    sock, client = guarded(head_bytes=len(HEAD))
    client.sendall(HEAD + b"x" * 5000)  # read together with the head: not part of it
    assert sock.recv(8192).startswith(HEAD)
    sock, client = guarded(head_bytes=len(HEAD) - 1)
    client.sendall(HEAD)
    with pytest.raises(LimitRequestHeaders):
        sock.recv(8192)
    sock, client = guarded(head_bytes=100)
    client.sendall(b"GET / HTTP/1.1\r\nX: " + b"y" * 200)  # no end in sight
    with pytest.raises(LimitRequestHeaders):
        sock.recv(8192)


def test_an_idle_connection_ends_quietly_and_a_trickled_head_gets_a_timeout():
    sock, _client = guarded()
    started = time.monotonic()
    assert sock.recv(8192) == b""
    assert 0.25 < time.monotonic() - started < 2
    sock, client = guarded()
    client.send(b"GET / HTTP/1.1\r\n")
    with pytest.raises(HeadTimeout):
        sock.recv(8192)


def test_a_body_must_keep_up_the_minimum_rate_after_its_grace():
    sock, client = guarded(head_timeout=0.3, body_min_rate=100.0)
    client.sendall(HEAD)
    sock.recv(8192)
    request = Request()
    sock.begin_body(request)
    client.send(b"x" * 20)  # earns 0.2 s on top of the 0.3 s grace
    assert sock.recv(100) == b"x" * 20
    started = time.monotonic()
    with pytest.raises(BodyTimeout):
        sock.recv(100)
    assert 0.3 < time.monotonic() - started < 2 and request.closing


def test_the_whole_request_has_a_deadline_whatever_the_rate():
    sock, client = guarded(head_timeout=0.2, request_timeout=0.6, body_min_rate=1.0)
    client.sendall(HEAD)
    sock.recv(8192)
    sock.begin_body(Request())
    started = time.monotonic()
    with pytest.raises(BodyTimeout):
        while True:
            client.send(b"x")
            sock.recv(100)
            time.sleep(0.05)
    assert time.monotonic() - started < 1.5


def test_bytes_read_ahead_go_to_the_body_and_then_to_the_next_request():
    sock, client = guarded()
    second = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    client.sendall(HEAD + b"0123456789" + second)  # pipelined
    assert sock.recv(len(HEAD)) == HEAD
    sock.begin_body(Request())
    assert sock.recv(10) == b"0123456789"
    sock.begin_head()
    assert sock.recv(8192) == second


def test_writes_get_their_own_timeout():
    sock, client = guarded()
    sock.settimeout(0.001)  # as a read may leave it
    sock.sendall(b"x" * 10_000)
    assert sock.gettimeout() == 1.0
    client.close()
