"""The callback policy's allow lists, TRANSQ_CALLBACK_ALLOW_HTTP_HOSTS and TRANSQ_CALLBACK_ALLOW_PRIVATE_HOSTS:
comma-separated `host:port` pairs (an IPv6 address in brackets, `[fd00::1]:8443`). A bare `host` allows the
default port of the URL's scheme only (443 for https, 80 for http), never every port of the host: allowing a
private receiver must not allow the broker's port beside it. `*` alone allows any host on any port (the
policy off: for tests). Host names compare without case and without a trailing dot."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache

DEFAULT_PORTS = {"http": 80, "https": 443}
_NAME = re.compile(r"[^\s\[\]/@?#,*:]+")


@dataclass(frozen=True)
class HostList:
    pairs: frozenset[tuple[str, int | None]]  # (host, port); port None: the scheme's default port
    everything: bool = False

    def allows(self, scheme: str, host: str, port: int) -> bool:
        host = normal_host(host)
        if self.everything or (host, port) in self.pairs:
            return True
        return (host, None) in self.pairs and port == DEFAULT_PORTS.get(scheme)


def normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


@lru_cache(maxsize=64)
def parse_host_list(text: str, variable: str = "the host list") -> HostList:
    """The pairs of `text`, or ValueError naming `variable` and the entry it cannot read."""
    pairs: set[tuple[str, int | None]] = set()
    everything = False
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        if entry == "*":
            everything = True
            continue
        host, port = _split(entry)
        if not host or not (_NAME.fullmatch(host) or _is_address(host)) or (port is not None and not 0 < port < 65536):
            raise ValueError(
                f"{variable}: {entry!r} is not a host:port pair (e.g. hooks.internal:8443, [fd00::1]:8443; a bare host "
                "means the scheme's default port only; `*`: any host and port)"
            )
        pairs.add((normal_host(host), port))
    return HostList(frozenset(pairs), everything)


def _split(entry: str) -> tuple[str, int | None]:
    """`[v6]:port`, `[v6]`, `host:port`, `host`, or a bare IPv6 address (more than one colon, no brackets)."""
    if entry.startswith("["):
        host, bracket, rest = entry[1:].partition("]")
        if not bracket or not _is_address(host) or (rest and not rest.startswith(":")):
            return "", None
        return host, _port(rest[1:]) if rest else None
    if entry.count(":") == 1:
        host, port = entry.split(":")
        return host, _port(port)
    if entry.count(":") > 1:
        return (entry, None) if _is_address(entry) else ("", None)
    return entry, None


def _port(text: str) -> int:
    return int(text) if text.isdigit() and len(text) <= 5 else -1


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    return True
