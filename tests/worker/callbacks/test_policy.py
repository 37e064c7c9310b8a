"""The SSRF policy as the API calls it at submission (its CallbackRefused becomes 422 naming `callback_url`),
with the system's real resolver: https only unless a host is allowed plain http, and no loopback, private,
link-local, multicast, reserved or unspecified address (IPv4 and IPv6, IPv4-mapped too) unless allowed."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from shared.callback_policy import CallbackRefused, check_callback_url, non_public
from shared.settings import Settings

SECRET = "test-callback-secret-0123456789"
STRICT = Settings(callback_secret=SECRET, callback_allow_http_hosts="*")  # plain http allowed, no private
PUBLIC = ["93.184.215.14"]  # what a public name resolves to (a fixed resolver: no network here)


@pytest.mark.parametrize(
    "url, kind",
    [
        ("http://127.0.0.1:8080/hook", "loopback"),
        ("http://10.0.0.1/hook", "private"),
        ("http://[::1]:9000/hook", "loopback"),
        ("http://localhost:8080/hook", "loopback"),  # a name resolving to loopback
        ("http://[::ffff:127.0.0.1]/hook", "loopback"),  # IPv4-mapped IPv6
        ("http://[::ffff:10.1.2.3]/hook", "private"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),  # a cloud's metadata service
        ("http://[fe80::1]/hook", "link-local"),
        ("http://224.0.0.1/hook", "multicast"),
        ("http://0.0.0.0:8080/hook", "unspecified"),
        ("http://[::]/hook", "unspecified"),
        ("http://240.0.0.1/hook", "reserved"),
        ("http://[fd00::1]/hook", "private"),
        ("http://100.64.0.1/hook", "non-global"),  # carrier-grade NAT
        ("http://[2002:7f00:1::]/hook", "loopback"),  # 6to4 of 127.0.0.1
        ("http://[64:ff9b::a00:1]/hook", "private"),  # NAT64 of 10.0.0.1
        ("http://2130706433/hook", "loopback"),  # 127.0.0.1 as one number
    ],
)
def test_non_public_addresses_are_refused_unless_allowed(url, kind):
    with pytest.raises(CallbackRefused) as refused:
        check_callback_url(url, STRICT)
    assert refused.value.permanent and str(refused.value).startswith("callback_url")
    assert f"not a public address ({kind})" in str(refused.value)
    parts = urlsplit(url)
    host, port = parts.hostname, parts.port or 80
    pair = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    allowed = Settings(callback_secret=SECRET, callback_allow_http_hosts="*", callback_allow_private_hosts=pair)
    assert check_callback_url(url, allowed).addresses
    another_port = Settings(
        callback_secret=SECRET, callback_allow_http_hosts="*", callback_allow_private_hosts=pair[:-1] + "1"
    )
    with pytest.raises(CallbackRefused, match=f"not a public address \\({kind}\\)"):
        check_callback_url(url, another_port)


def test_https_only_unless_the_host_and_port_are_allowed_plain_http():
    settings = Settings(callback_secret=SECRET, callback_allow_http_hosts="hooks.internal:81,plain.internal")
    target = check_callback_url("https://hooks.example.com/a?b=1", settings, resolver=lambda h, p: PUBLIC)
    assert (target.host, target.port, target.path, target.addresses) == (
        "hooks.example.com",
        443,
        "/a?b=1",
        ("93.184.215.14",),
    )
    with pytest.raises(CallbackRefused, match="must use https"):
        check_callback_url("http://hooks.example.com/a", settings, resolver=lambda h, p: PUBLIC)
    assert check_callback_url("http://hooks.internal:81/", settings, resolver=lambda h, p: PUBLIC).port == 81
    assert check_callback_url("http://plain.internal/", settings, resolver=lambda h, p: PUBLIC).port == 80
    for other in ("http://hooks.internal/", "http://hooks.internal:82/", "http://plain.internal:8080/"):
        with pytest.raises(CallbackRefused, match="is not one"):
            check_callback_url(other, settings, resolver=lambda h, p: PUBLIC)


@pytest.mark.parametrize(
    "url, message",
    [
        ("", "non-empty string"),
        (42, "non-empty string"),
        ("ftp://hooks.example.com/x", "absolute https URL"),
        ("https:///nohost", "absolute https URL"),
        ("/relative", "absolute https URL"),
        ("https://user:pw@hooks.example.com/", "user or password"),
        ("https://hooks.example.com:99999/", "not a valid URL"),
        ("https://hooks.example.com/a b", "spaces or control"),
        ("https://hooks.example.com/" + "a" * 2100, "at most 2048"),
    ],
)
def test_malformed_urls_are_refused(url, message):
    with pytest.raises(CallbackRefused, match=message):
        check_callback_url(url, STRICT, resolver=lambda h, p: PUBLIC)


def test_one_private_address_among_public_ones_is_refused_and_an_unresolvable_name_may_be_retried():
    with pytest.raises(CallbackRefused, match="10.9.8.7"):
        check_callback_url("https://rebind.example.com/", STRICT, resolver=lambda h, p: [*PUBLIC, "10.9.8.7"])
    with pytest.raises(CallbackRefused, match="does not resolve") as refused:
        check_callback_url("https://no-such-host.invalid/", STRICT)
    assert not refused.value.permanent  # at delivery: DNS may come back


def test_callbacks_are_off_without_a_secret():
    with pytest.raises(CallbackRefused, match="TRANSQ_CALLBACK_SECRET"):
        check_callback_url("https://hooks.example.com/", Settings(), resolver=lambda h, p: PUBLIC)


def test_public_addresses_pass():
    assert non_public("93.184.215.14") == "" and non_public("2606:4700::1111") == ""
