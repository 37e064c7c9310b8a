"""Event streams (GET /v1/jobs/<id>/events) under faults and hostile clients: a worker killed mid-job (the
takeover continues the stream), streams over a key's limit (429), another key's job (404), a bogus
Last-Event-ID (400), a client that never reads (its stream ends by its limits and frees its slot)."""

import json
import socket
import time

import pytest
import requests
import sseclient

from tests.reliability.conftest import holder, record, slow_text, wait_claimed_by_another

pytestmark = pytest.mark.slow

KEYS = ("key-one-0123456789", "key-two-0123456789")


def open_stream(s, job_id, key="", last_event_id=""):
    headers = {"Accept": "text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    return requests.get(f"{s.api.url}/v1/jobs/{job_id}/events", headers=headers, stream=True, timeout=30)


def test_a_worker_killed_mid_job_the_takeover_continues_the_stream(make_stack):
    s = make_stack(test_hooks=True, lease_seconds=3.0, visibility_timeout=900, max_batch_sentences=1)
    s.add_worker(name="w2")
    job = s.client.submit(["".join(slow_text(1, f"第{i}句") for i in range(6))])
    response = open_stream(s, job["id"])
    events, killed = [], False
    for event in sseclient.SSEClient(response).events():
        events.append((event.id, event.event, json.loads(event.data)))
        if not killed and sum(k == "sentence" for _, k, _ in events) == 2:
            old, old_id = holder(s, job["id"])
            old.kill_all()  # mid-job, while this stream is open
            killed = True
    response.close()
    assert killed and events[-1][1] == "done" and events[-1][2]["status"] == "succeeded"
    wait_claimed_by_another(s, job["id"], old_id, timeout=1)  # (it has: the job succeeded)
    running = [d for _, k, d in events if k == "progress" and d["status"] == "running"]
    assert len(running) >= 2  # the first claim's, the takeover's (progress events after recordings too)
    indices = [d["index"] for _, k, d in events if k == "sentence"]
    assert sorted(set(indices)) == list(range(6))  # every sentence, the killed worker's recorded ones included
    assert record(s, job["id"])["fence"] == "2" and events[-1][2] == s.client.job(job["id"])


@pytest.fixture
def keyed(make_stack):
    """API keys on, two streams per key, short stream limits; its worker stopped once its route is known, so
    jobs stay queued and their streams stay open."""
    s = make_stack(
        api_keys=",".join(KEYS),
        event_streams_per_key=2,
        event_stream_seconds=4,
        event_idle_seconds=3,
        event_heartbeat_seconds=1.0,
    )
    s.workers[0].stop()
    return s


def submit(s, key, texts):
    headers = {"Authorization": f"Bearer {key}"}
    response = requests.post(f"{s.api.url}/v1/jobs", json={"texts": texts}, headers=headers, timeout=10)
    assert response.status_code == 202, response.text
    return response.json()["id"]


def test_streams_over_a_key_s_limit_another_key_s_job_and_a_bogus_last_event_id_are_refused(keyed):
    s = keyed
    job_id = submit(s, KEYS[0], ["你好。"])
    other = open_stream(s, job_id, key=KEYS[1])
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"
    assert open_stream(s, "0" * 32, key=KEYS[0]).status_code == 404
    assert open_stream(s, job_id).status_code == 401
    for bogus in ("abc", "1-2-3", "9" * 30 + "-0", "0-0; DROP", "-1"):
        refused = open_stream(s, job_id, key=KEYS[0], last_event_id=bogus)
        assert refused.status_code == 400 and "Last-Event-ID" in refused.json()["error"]["message"], bogus
    held = [open_stream(s, job_id, key=KEYS[0]) for _ in range(2)]
    assert all(r.status_code == 200 for r in held)
    third = open_stream(s, job_id, key=KEYS[0])
    assert third.status_code == 429 and third.json()["error"]["code"] == "too_many_streams"
    assert int(third.headers["Retry-After"]) >= 1
    theirs = open_stream(s, submit(s, KEYS[1], ["再见。"]), key=KEYS[1])
    assert theirs.status_code == 200  # another key's streams are its own
    theirs.close()
    for response in held:
        response.close()
    deadline = time.monotonic() + 15  # a closed stream's slot is freed at its next write (a heartbeat)
    while (again := open_stream(s, job_id, key=KEYS[0])).status_code == 429:
        assert time.monotonic() < deadline
        time.sleep(0.3)
    again.close()


def test_a_client_that_never_reads_holds_its_slot_only_until_the_stream_s_limits(keyed):
    s = keyed
    job = {"id": submit(s, KEYS[0], ["等待。"])}  # queued: its stream would follow it until a limit ends it
    host, port = s.api.url.removeprefix("http://").split(":")
    silent = []
    for _ in range(2):  # two raw connections that ask for the stream and never read a byte
        sock = socket.create_connection((host, int(port)))
        sock.sendall(
            f"GET /v1/jobs/{job['id']}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEYS[0]}\r\n\r\n".encode()
        )
        silent.append(sock)
    time.sleep(1)
    assert open_stream(s, job["id"], key=KEYS[0]).status_code == 429  # they hold the key's two slots
    assert requests.get(f"{s.api.url}/healthz", timeout=5).ok  # and nothing else
    deadline = time.monotonic() + 20  # idle 3 s / at most 4 s each
    while (response := open_stream(s, job["id"], key=KEYS[0])).status_code == 429:
        assert time.monotonic() < deadline, "a silent client's stream outlived its limits"
        time.sleep(0.5)
    assert response.status_code == 200
    response.close()
    for sock in silent:
        sock.close()
