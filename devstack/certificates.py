"""A throw-away CA and a server certificate signed by it, for Redis over TLS in tests (openssl CLI)."""

from __future__ import annotations

import ipaddress
import shutil
import subprocess
from pathlib import Path

from devstack.redis_server import TlsFiles, redis_server_binary

_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def make_tls_files(folder: Path, addresses: list[str], days: int = 2) -> TlsFiles:
    """A CA, and a server key and certificate valid for `addresses` (IPs, or host names), in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_key = folder / "ca.crt", folder / "ca.key"
    cert, key, request = folder / "server.crt", folder / "server.key", folder / "server.csr"
    names = ",".join(_subject_name(a) for a in addresses)
    _openssl("req", "-x509", *_KEY, "-keyout", ca_key, "-out", ca, "-days", days, "-subj", "/CN=transq test CA")
    _openssl("req", *_KEY, "-keyout", key, "-out", request, "-subj", "/CN=transq redis")
    extensions = folder / "server.ext"
    extensions.write_text(f"subjectAltName={names}\nextendedKeyUsage=serverAuth\n")
    _openssl(
        "x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
        "-days", days, "-extfile", extensions,
    )  # fmt: skip
    key.chmod(0o600)
    return TlsFiles(ca=str(ca), cert=str(cert), key=str(key))


def _subject_name(name: str) -> str:
    try:
        ipaddress.ip_address(name)
        return f"IP:{name}"
    except ValueError:
        return f"DNS:{name}"


def _openssl(*args: object) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True, timeout=60)


def tls_unavailable() -> str:
    """Why Redis over TLS cannot be tested here ('' when it can)."""
    if shutil.which("openssl") is None:
        return "the openssl command is not installed"
    binary = Path(redis_server_binary())
    if b"SSL_CTX_new" not in binary.read_bytes():
        return f"{binary} was built without TLS (BUILD_TLS=yes)"
    return ""
