"""One attempt is bounded as a whole (TRANSQ_CALLBACK_TIMEOUT), wherever a receiver is slow: its name's DNS
answer, a TLS handshake trickled a few bytes at a time, a status line trickled a byte at a time. Real
sockets on loopback addresses, a real TLS server behind a trickling relay."""

from __future__ import annotations

import socket
import ssl
import threading
import time

from devstack.certificates import make_tls_files
from shared.callback_policy import CallbackRefused, CallbackTarget
from tests.worker.callbacks.trickle import SlowReceiver
from worker.callbacks.sender import OUT_OF_TIME, post, resolver_until


def test_a_trickled_answer_is_cut_at_the_attempts_deadline():
    slow = SlowReceiver("127.0.0.2", every=0.3, slow=1)
    try:
        port = int(slow.where.split(":")[1])
        target = CallbackTarget(slow.url, "http", "127.0.0.2", port, "/slow", ("127.0.0.2",))
        started = time.monotonic()
        answer = post(target, b"{}", {}, started + 1.5)
        took = time.monotonic() - started
    finally:
        slow.stop()
    assert answer.status is None and OUT_OF_TIME in answer.error
    assert 1.4 < took < 2.2 and slow.connections[0].sent > 2  # bytes kept coming; the deadline cut it


def test_a_trickled_tls_handshake_is_cut_at_the_attempts_deadline(tmp_path, monkeypatch):
    files = make_tls_files(tmp_path / "tls", ["localhost"])
    monkeypatch.setenv("SSL_CERT_FILE", str(files.ca))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files.cert, files.key)
    server = socket.create_server(("127.0.0.1", 0))
    relay = socket.create_server(("127.0.0.3", 0))

    def serve() -> None:
        while True:
            try:
                client, _ = server.accept()
                with context.wrap_socket(client, server_side=True) as tls:
                    tls.recv(65536)
                    tls.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")
            except OSError:
                continue

    def pipe(source: socket.socket, sink: socket.socket, chunk: int, pause: float) -> None:
        try:
            while data := source.recv(65536):
                for start in range(0, len(data), chunk):
                    sink.sendall(data[start : start + chunk])
                    time.sleep(pause)
        except OSError:
            pass

    def relay_slowly() -> None:  # the server's bytes reach the deliverer 64 at a time, every 0.2 s
        while True:
            client, _ = relay.accept()
            upstream = socket.create_connection(server.getsockname())
            threading.Thread(target=pipe, args=(client, upstream, 65536, 0), daemon=True).start()
            threading.Thread(target=pipe, args=(upstream, client, 64, 0.2), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    threading.Thread(target=relay_slowly, daemon=True).start()
    port = relay.getsockname()[1]
    target = CallbackTarget(f"https://localhost:{port}/", "https", "localhost", port, "/", ("127.0.0.3",))
    started = time.monotonic()
    answer = post(target, b"{}", {}, started + 1.5)
    assert answer.status is None and OUT_OF_TIME in answer.error
    assert time.monotonic() - started < 2.2
    assert post(target, b"{}", {}, time.monotonic() + 60).status == 204  # given the time, the same path works


def test_a_name_that_resolves_slowly_fails_the_attempt_at_its_deadline():
    def slow_dns(host: str, port: int) -> list[str]:
        time.sleep(3)
        return ["93.184.215.14"]

    started = time.monotonic()
    resolve = resolver_until(started + 0.5, slow_dns)
    try:
        resolve("hooks.example.com", 443)
        raise AssertionError("resolved")
    except CallbackRefused as refused:
        assert not refused.permanent and "did not resolve in time" in str(refused)
    assert time.monotonic() - started < 1.0
    threads: list[threading.Thread] = []
    literal = resolver_until(
        time.monotonic() + 5, lambda host, port: threads.append(threading.current_thread()) or [host]
    )
    assert literal("127.0.0.1", 80) == ["127.0.0.1"] and threads == [threading.current_thread()]  # no thread
