"""Hardening against hostile clients, through gunicorn (the API's own worker class) and real Redis:
isolation between API keys, atomic idempotency and queue cap, rate limits that cannot be dodged, body
limits, slow and waiting connections, and gunicorn's own errors in the API's JSON shape."""

import json
import re
import socket
import threading
import time
import uuid

import pytest
import requests

from tests.reliability.conftest import slow_text

pytestmark = pytest.mark.slow


def raw_request(port: int, data: bytes, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are; read one response (status, lower-cased headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        head, _, body = received.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
        while len(body) < int(headers.get("content-length", 0)):
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(lines[0].split()[1]), headers, body


def assert_error_shape(body: bytes, code: str) -> None:
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message"} and error["code"] == code, error


def run_together(count: int, call) -> list:  # type: ignore[no-untyped-def]
    """Run `call(i)` from `count` threads released at the same moment; their results in order."""
    barrier, results = threading.Barrier(count), [None] * count

    def run(i: int) -> None:
        barrier.wait()
        results[i] = call(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


# 1. Isolation between API keys ------------------------------------------------------------------


def test_a_job_belongs_to_the_key_that_created_it(make_stack):
    s = make_stack(api_keys="alice-key,bob-key", worker=False)
    alice, bob = {"X-API-Key": "alice-key"}, {"Authorization": "Bearer bob-key"}
    job = requests.post(s.api.url + "/v1/jobs", json={"text": "爱丽丝的工作。"}, headers=alice, timeout=5).json()
    url = f"{s.api.url}/v1/jobs/{job['id']}"
    unknown = f"{s.api.url}/v1/jobs/{'0' * 32}"
    for method in ("GET", "DELETE"):
        other = requests.request(method, url, headers=bob, timeout=5)
        missing = requests.request(method, unknown, headers=bob, timeout=5)
        assert other.status_code == missing.status_code == 404, method
        assert other.text.replace(job["id"], "") == missing.text.replace("0" * 32, "")  # says nothing more
    assert requests.get(url, headers=alice, timeout=5).json()["status"] == "queued"  # Bob cancelled nothing
    assert requests.delete(url, headers=alice, timeout=5).json()["status"] == "cancelled"


# 2. Idempotency -----------------------------------------------------------------------------


def test_concurrent_posts_with_one_idempotency_key_create_exactly_one_job(make_stack):
    s = make_stack(worker=False)
    headers = {"Idempotency-Key": "order-" + uuid.uuid4().hex}
    responses = run_together(
        10, lambda i: requests.post(s.api.url + "/v1/jobs", json={"text": "只要一个。"}, headers=headers, timeout=10)
    )
    assert {r.status_code for r in responses} == {202}
    assert len({r.json()["id"] for r in responses}) == 1
    assert len(s.r.keys("transq:job:*")) == 1 and s.r.llen(s.queue) == 1
    # The same request spelt the other way is the same request; a different one is refused.
    same = requests.post(s.api.url + "/v1/jobs", json={"texts": ["只要一个。"]}, headers=headers, timeout=5)
    assert same.json()["id"] == responses[0].json()["id"]
    other = requests.post(s.api.url + "/v1/jobs", json={"text": "另一个。"}, headers=headers, timeout=5)
    assert other.status_code == 422
    assert_error_shape(other.content, "idempotency_mismatch")
    assert len(s.r.keys("transq:job:*")) == 1


# 7. Queue cap race --------------------------------------------------------------------------


def test_the_queue_cap_holds_under_concurrent_submissions(make_stack):
    s = make_stack(max_queue=5, worker=False)
    responses = run_together(
        30, lambda i: requests.post(s.api.url + "/v1/jobs", json={"text": f"抢位置{i}。"}, timeout=10)
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [202] * 5 + [503] * 25, statuses
    assert s.r.zcard(s.pending) == 5 and len(s.r.keys("transq:job:*")) == 5


# 3. Rate limits that cannot be dodged ---------------------------------------------------------


def test_a_made_up_key_per_request_does_not_escape_the_rate_limit(make_stack):
    s = make_stack(rate_limit="5/minute", worker=False)
    statuses = [
        requests.post(
            s.api.url + "/v1/jobs", json={"text": f"换钥匙{i}。"}, headers={"X-API-Key": uuid.uuid4().hex}, timeout=5
        ).status_code
        for i in range(10)
    ]
    assert statuses == [202] * 5 + [429] * 5, statuses


def test_failed_key_checks_are_limited_per_address_and_valid_keys_still_pass(make_stack):
    s = make_stack(api_keys="the-real-key", auth_failure_limit="5/minute", worker=False)
    guesses = [
        requests.get(f"{s.api.url}/v1/jobs/{'a' * 32}", headers={"X-API-Key": f"guess-{i}"}, timeout=5)
        for i in range(8)
    ]
    assert [g.status_code for g in guesses] == [401] * 5 + [429] * 3
    assert_error_shape(guesses[-1].content, "rate_limited")
    assert 1 <= int(guesses[-1].headers["Retry-After"]) <= 61
    real = requests.post(
        s.api.url + "/v1/jobs", json={"text": "真钥匙。"}, headers={"X-API-Key": "the-real-key"}, timeout=5
    )
    assert real.status_code == 202


# 4. Body limits -----------------------------------------------------------------------------


def test_chunked_bodies_over_the_limit_are_413_and_broken_chunks_400(make_stack):
    s = make_stack(worker=False, max_body_bytes=64 * 1024)
    body = json.dumps({"text": "长" * 100_000}).encode()  # 300 KB

    def chunks():  # no Content-Length: requests sends Transfer-Encoding: chunked
        for i in range(0, len(body), 16384):
            yield body[i : i + 16384]

    response = requests.post(
        s.api.url + "/v1/jobs", data=chunks(), headers={"Content-Type": "application/json"}, timeout=10
    )
    assert response.status_code == 413
    assert_error_shape(response.content, "payload_too_large")
    assert s.r.keys("transq:job:*") == []
    head = b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    status, _, answer = raw_request(s.api.port, head + b"zz\r\n{}\r\n0\r\n\r\n")
    assert status == 400
    assert_error_shape(answer, "bad_request")


def test_deep_nesting_is_invalid_json_and_joiner_floods_split_in_linear_time(make_stack):
    s = make_stack(worker=False, max_chars=600_000)
    nested = requests.post(
        s.api.url + "/v1/jobs", data=b"[" * 100_000, headers={"Content-Type": "application/json"}, timeout=10
    )
    assert nested.status_code == 400
    assert_error_shape(nested.content, "invalid_json")
    # 1 MiB of "a" + zero-width joiner, one unpunctuated sentence: quadratic splitting took minutes here;
    # the generous timeout only tells a hang from an answer (bench/validation.py measures the time).
    flood_body = json.dumps({"text": "a\u200d" * 262_000}, ensure_ascii=False).encode()  # just under 1 MiB
    flood = requests.post(
        s.api.url + "/v1/jobs", data=flood_body, headers={"Content-Type": "application/json"}, timeout=20
    )
    assert flood.status_code == 202, flood.text[:200]


# 5. Slow and waiting connections ----------------------------------------------------------------


def test_slow_and_waiting_clients_do_not_starve_the_api(make_stack):
    s = make_stack(worker=False, read_timeout=30.0, wait_timeout=30.0)
    slow = []
    for _ in range(200):  # slowloris from another address: a request line and half a header, then nothing
        sock = socket.create_connection(("127.0.0.1", s.api.port), source_address=("127.0.0.2", 0))
        sock.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Len")
        slow.append(sock)
    waiting = [
        threading.Thread(
            target=requests.post,
            args=(s.api.url + ("/v1/translate" if i % 2 else "/api/translate"),),
            kwargs={"json": {"text": f"等着{i}。", "timeout": 20} if i % 2 else {"text": f"等着{i}。"}, "timeout": 40},
            daemon=True,
        )
        for i in range(16)
    ]
    for thread in waiting:
        thread.start()
    time.sleep(1)
    try:
        for i in range(5):  # every answer within a second, while all of the above hold their connections
            assert requests.get(s.api.url + "/healthz", timeout=1).status_code == 200
            assert requests.post(s.api.url + "/v1/jobs", json={"text": f"插队{i}。"}, timeout=1).status_code == 202
    finally:
        for sock in slow:
            sock.close()


def test_slow_headers_and_bodies_are_cut_off_at_the_read_timeout(make_stack):
    s = make_stack(worker=False, read_timeout=2.0)
    with socket.create_connection(("127.0.0.1", s.api.port), timeout=15) as sock:
        started = time.monotonic()
        assert sock.recv(1024) == b""  # an idle connection: closed by the server, without an answer
        assert time.monotonic() - started < 10
    status, _, body = raw_request(s.api.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", timeout=15)  # never finished
    assert status == 408
    assert_error_shape(body, "request_timeout")
    head = b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    status, _, body = raw_request(s.api.port, head + b'{"text": ', timeout=15)  # the rest never comes
    assert status == 408
    assert_error_shape(body, "request_timeout")


def test_waiting_calls_answer_in_their_own_shape_never_a_job_body(make_stack):
    s = make_stack(worker=False, wait_timeout=1.0)
    response = requests.post(s.api.url + "/api/translate", json={"text": "没有工人。"}, timeout=10)
    assert response.status_code == 504
    assert_error_shape(response.content, "timeout")
    job_id = re.search(r"job ([0-9a-f]{32})", response.json()["error"]["message"]).group(1)
    assert s.client.job(job_id)["status"] == "queued"


def test_a_failed_job_in_v1_translate_is_a_documented_status_not_500(make_stack):
    s = make_stack(test_hooks=True, task_soft_time_limit=2, task_time_limit=6)
    response = requests.post(
        s.api.url + "/v1/translate", json={"text": slow_text(4, "太慢"), "timeout": 25}, timeout=40
    )
    assert response.status_code == 504, response.text
    assert_error_shape(response.content, "timeout")


# 9. gunicorn's own errors -------------------------------------------------------------------


def test_gunicorn_errors_come_back_as_json(make_stack):
    s = make_stack(worker=False)
    port = s.api.port
    cases = [
        (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n", 431),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(101)) + b"\r\n", 431),
        (b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n", 400),
    ]
    for request, expected in cases:
        status, headers, body = raw_request(port, request)
        assert status == expected, (request[:60], body)
        assert headers["content-type"] == "application/json"
        assert set(json.loads(body)["error"]) == {"code", "message"}


def test_metrics_content_type_names_its_charset_once(stack):
    content_type = requests.get(stack.api.url + "/metrics", timeout=5).headers["Content-Type"]
    assert content_type.count("charset") == 1 and content_type.startswith("text/plain")
