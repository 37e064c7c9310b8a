"""A `callback_url` at submission (POST /v1/jobs through the real app): the allow lists name `host:port`
pairs, so a private host allowed for its receiver's port is refused on any other port, the broker's Redis
port too (hostile-client trial, issue 31 item 8); a bare host is its scheme's default port only."""

import pytest

from shared.settings import Settings

SECRET = "test-callback-secret-0123456789"


def post(client, url):
    return client.post("/v1/jobs", json={"text": "你好。", "callback_url": url})


def refusal(response) -> str:
    assert response.status_code == 422, response.get_data(as_text=True)
    error = response.get_json()["error"]
    assert error["code"] == "validation_error" and error["message"].startswith("callback_url")
    return error["message"]


def test_a_private_host_allowed_as_host_port_allows_that_port_only(make_app, redis_server):
    allowed = "127.0.0.1:18090"
    client = make_app(
        callback_secret=SECRET, callback_allow_http_hosts=allowed, callback_allow_private_hosts=allowed
    ).test_client()
    assert post(client, "http://127.0.0.1:18090/done").status_code == 202
    for port in (redis_server.port, 18091, 80):
        assert f"127.0.0.1:{port} is not one" in refusal(post(client, f"http://127.0.0.1:{port}/done"))
    # plain http aside: over https too, the other port's loopback address is refused
    message = refusal(post(client, f"https://127.0.0.1:{redis_server.port}/"))
    assert "not a public address (loopback)" in message and "TRANSQ_CALLBACK_ALLOW_PRIVATE_HOSTS" in message


def test_a_bare_host_allows_its_schemes_default_port_only(make_app):
    client = make_app(
        callback_secret=SECRET, callback_allow_http_hosts="*", callback_allow_private_hosts="127.0.0.1,[::1]:9000"
    ).test_client()
    assert post(client, "http://127.0.0.1/done").status_code == 202
    assert post(client, "https://127.0.0.1/done").status_code == 202
    assert post(client, "http://[::1]:9000/done").status_code == 202
    for url in ("http://127.0.0.1:8080/", "https://127.0.0.1:80/", "http://[::1]/", "http://[::1]:9001/"):
        assert "not a public address (loopback)" in refusal(post(client, url)), url


@pytest.mark.parametrize("entry", ["127.0.0.1:", "127.0.0.1:0", "127.0.0.1:70000", "host:port", "a b:80", "[::1"])
def test_a_malformed_allow_list_entry_stops_the_service_at_start(entry):
    for name in ("callback_allow_http_hosts", "callback_allow_private_hosts"):
        with pytest.raises(ValueError, match=f"TRANSQ_{name.upper()}.*is not a host:port pair"):
            Settings(**{name: entry})
