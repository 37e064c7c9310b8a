"""Where a completion callback may go (SSRF policy), checked at submission and again at delivery.

A `callback_url` is `https` (plain `http` only to a host and port TRANSQ_CALLBACK_ALLOW_HTTP_HOSTS names),
carries no user or password, and its host resolves only to public addresses: none loopback, private,
link-local, multicast, reserved, unspecified or otherwise not global (IPv4 and IPv6, IPv4 inside IPv6 too),
unless TRANSQ_CALLBACK_ALLOW_PRIVATE_HOSTS names the host with the URL's port (shared.callback_hosts: a bare
host is its scheme's default port only, so allowing a private receiver allows no other port of its host).
The deliverer connects to the very addresses it checked (a name cannot resolve to another address between
the check and the connection) and follows no redirect.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from shared.callback_hosts import DEFAULT_PORTS, parse_host_list
from shared.settings import Settings

MAX_URL_CHARS = 2048
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

Resolver = Callable[[str, int], list[str]]


class CallbackRefused(ValueError):
    """The URL may not be called. `permanent`: the policy refuses it (a submission gets 422, a delivery fails
    at once); otherwise its name did not resolve now (a delivery retries)."""

    def __init__(self, message: str, permanent: bool = True):
        super().__init__(message)
        self.permanent = permanent


@dataclass(frozen=True)
class CallbackTarget:
    """A checked URL: where to connect (`addresses`, each allowed) and what to ask for."""

    url: str
    scheme: str
    host: str  # the name (or address literal) the URL gives: the Host header and the TLS server name
    port: int
    path: str  # path and query
    addresses: tuple[str, ...]


def resolve(host: str, port: int) -> list[str]:
    """The addresses a host name resolves to (an address literal: itself)."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise CallbackRefused(f"callback_url's host {host!r} does not resolve ({exc})", permanent=False) from None
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def check_callback_url(url: object, settings: Settings, resolver: Resolver = resolve) -> CallbackTarget:
    """The target of `url`, or CallbackRefused saying why it may not be called."""
    if not settings.callback_secret:
        raise CallbackRefused("callback_url: callbacks are off on this server (TRANSQ_CALLBACK_SECRET is not set)")
    if not isinstance(url, str) or not url:
        raise CallbackRefused("callback_url must be a non-empty string (an https URL)")
    if len(url) > MAX_URL_CHARS:
        raise CallbackRefused(f"callback_url has {len(url)} characters; at most {MAX_URL_CHARS} are allowed")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise CallbackRefused(f"callback_url is not a valid URL ({exc})") from None
    host = (parts.hostname or "").rstrip(".")
    if parts.scheme not in ("http", "https") or not host:
        raise CallbackRefused("callback_url must be an absolute https URL")
    if parts.username is not None or parts.password is not None:
        raise CallbackRefused("callback_url must not carry a user or password")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise CallbackRefused("callback_url must not contain spaces or control characters")
    port = port or DEFAULT_PORTS[parts.scheme]
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if parts.scheme == "http" and not _allowed(settings.callback_allow_http_hosts, "HTTP", parts.scheme, host, port):
        raise CallbackRefused(
            "callback_url must use https (plain http only to the host:port pairs TRANSQ_CALLBACK_ALLOW_HTTP_HOSTS "
            f"names; {where} is not one)"
        )
    addresses = resolver(host, port)
    if not addresses:
        raise CallbackRefused(f"callback_url's host {host!r} does not resolve", permanent=False)
    if not _allowed(settings.callback_allow_private_hosts, "PRIVATE", parts.scheme, host, port):
        for address in addresses:
            reason = non_public(address)
            if reason:
                raise CallbackRefused(
                    f"callback_url's host {host!r} resolves to {address}, not a public address ({reason}); callbacks go to "
                    "public addresses only, or to the host:port pairs TRANSQ_CALLBACK_ALLOW_PRIVATE_HOSTS names "
                    f"({where} is not one)"
                )
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return CallbackTarget(url, parts.scheme, host, port, path, tuple(addresses))


def non_public(address: str) -> str:
    """Why an address is not a public one ('' when it is): the first of its kinds that a callback may not
    reach; an IPv6 address that carries an IPv4 one (mapped, 6to4, NAT64) is judged by that one too."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    candidates: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    if isinstance(ip, ipaddress.IPv6Address):  # the IPv4 address inside first: it names the kind
        if ip.ipv4_mapped:
            candidates.append(ip.ipv4_mapped)
        if ip.sixtofour:
            candidates.append(ip.sixtofour)
        if ip in _NAT64:
            candidates.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    candidates.append(ip)
    for candidate in candidates:
        for kind in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
            if getattr(candidate, f"is_{kind}"):
                return kind.replace("_", "-")
        if not candidate.is_global:
            return "non-global"
    return ""


def _allowed(allowed: str, which: str, scheme: str, host: str, port: int) -> bool:
    """Whether the allow list TRANSQ_CALLBACK_ALLOW_<which>_HOSTS (`allowed`) names the host with this port."""
    return parse_host_list(allowed, f"TRANSQ_CALLBACK_ALLOW_{which}_HOSTS").allows(scheme, host, port)
