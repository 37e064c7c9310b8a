"""Several network hosts on one machine: Linux network namespaces joined by a bridge (root only).

Each host is a namespace with its own address on a private /24 picked at random (10.X.Y.0/24); a
bridge in a namespace of its own joins them, so nothing in the machine's own namespace changes.
Processes run on a host through `ip netns exec` (`host.launcher` is that prefix; RedisServer,
WorkerProcess and ApiProcess take it). The calling thread can itself act from a host
(`network.inside(host)`), which is how a test reaches the others. Usage:

    with Network() as net:                        # Network.unavailable() says why it cannot run
        broker, api_host, client = net.add_hosts("broker", "api", "client")
        with net.inside(client):                  # this thread's new sockets live on `client`
            redis = RedisServer(host=broker.address, launcher=broker.launcher, password="s3cret").start()
            settings = stack_settings(redis.url, model_dir)
            api = ApiProcess(settings, host=api_host.address, launcher=api_host.launcher).start()
            net.cut(broker)                       # its link goes down: packets to and from it are lost
            net.heal(broker)
            net.kill_processes(broker)            # SIGKILL everything running on it (the host "dies")
            net.separate(broker, [api_host])      # an asymmetric partition: only these pairs lose each other
            net.rejoin(broker, [api_host])

Leaving the block (or close()) kills what still runs on the hosts and deletes the namespaces, even after
a failure; a new Network also deletes those left over by a process that no longer runs (names carry the
owner's pid: `transq-<pid>-<id>-<host>`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PREFIX = "transq-"
_NETNS_DIR = Path("/run/netns")
_CLONE_NEWNET = 0x40000000


@dataclass(frozen=True)
class Host:
    name: str
    namespace: str
    address: str
    port: str  # the bridge's end of its link, in the switch namespace

    @property
    def launcher(self) -> list[str]:
        """The prefix that runs a command on this host."""
        return ["ip", "netns", "exec", self.namespace]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _setns(path: str) -> None:
    """Move the calling thread into the network namespace at `path` (Linux setns(2))."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


class Network:
    """A private /24 of hosts; see the module's docstring."""

    def __init__(self) -> None:
        self.id = f"{os.getpid()}-{random.randrange(16**4):04x}"
        self.subnet = f"10.{random.randrange(100, 250)}.{random.randrange(1, 250)}"
        self.switch = f"{PREFIX}{self.id}-sw"
        self.hosts: dict[str, Host] = {}
        self._namespaces: list[str] = []

    @staticmethod
    def unavailable() -> str:
        """Why namespaces cannot be used here ('' when they can)."""
        if os.name != "posix" or not Path("/proc/self/ns/net").exists():
            return "network namespaces need Linux"
        if shutil.which("ip") is None:
            return "the `ip` command (iproute2) is not installed"
        if os.geteuid() != 0:
            return "creating network namespaces needs root"
        probe = f"{PREFIX}{os.getpid()}-probe"
        done = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
        if done.returncode != 0:
            return f"`ip netns add` is not permitted here: {done.stderr.strip()}"
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
        return ""

    def start(self) -> Network:
        remove_leftovers()
        self._add_namespace(self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")
        return self

    def _add_namespace(self, name: str) -> None:
        _ip("netns", "add", name)
        self._namespaces.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def add_host(self, name: str) -> Host:
        """A new host (a namespace) with the next address of the subnet, linked to the bridge."""
        index = len(self.hosts) + 1
        host = Host(name, f"{PREFIX}{self.id}-{name}", f"{self.subnet}.{index + 1}", f"p{index}")
        self._add_namespace(host.namespace)
        _ip(
            "-n", self.switch, "link", "add", host.port, "type", "veth", "peer", "name", "eth0", "netns", host.namespace
        )
        _ip("-n", self.switch, "link", "set", host.port, "master", "br0", "up")
        _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
        _ip("-n", host.namespace, "link", "set", "eth0", "up")
        self.hosts[name] = host
        return host

    def add_hosts(self, *names: str) -> list[Host]:
        return [self.add_host(n) for n in names]

    def cut(self, host: Host) -> None:
        """Take the host's link down at the bridge: what it sends or is sent is lost (no error, no reset)."""
        _ip("-n", self.switch, "link", "set", host.port, "down")

    def heal(self, host: Host) -> None:
        _ip("-n", self.switch, "link", "set", host.port, "up")

    def separate(self, host: Host, others: list[Host]) -> None:
        """Lose what `host` and each of `others` send each other (blackhole routes on both ends, so no error
        either side, as cut() does); both still reach every other host: an asymmetric partition."""
        for other in others:
            _ip("-n", host.namespace, "route", "add", "blackhole", f"{other.address}/32")
            _ip("-n", other.namespace, "route", "add", "blackhole", f"{host.address}/32")

    def rejoin(self, host: Host, others: list[Host]) -> None:
        """Undo separate()."""
        for other in others:
            _ip("-n", host.namespace, "route", "del", "blackhole", f"{other.address}/32")
            _ip("-n", other.namespace, "route", "del", "blackhole", f"{host.address}/32")

    def pids(self, host: Host) -> list[int]:
        done = subprocess.run(["ip", "netns", "pids", host.namespace], capture_output=True, text=True)
        return [int(p) for p in done.stdout.split()]

    def kill_processes(self, host: Host) -> None:
        """SIGKILL every process running on the host (all of them were started on it by this network)."""
        _kill_namespace_processes(host.namespace)

    @contextlib.contextmanager
    def inside(self, host: Host) -> Iterator[Host]:
        """Run the calling thread on `host` (its sockets, and threads it starts, live there) until the block ends."""
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            _setns(str(_NETNS_DIR / host.namespace))
            try:
                yield host
            finally:
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.setns(home, _CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "could not return to the original network namespace")
        finally:
            os.close(home)

    def close(self) -> None:
        """Kill what still runs on the hosts and delete every namespace of this network."""
        for name in reversed(self._namespaces):
            _kill_namespace_processes(name)
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        self._namespaces.clear()

    def __enter__(self) -> Network:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()


def _kill_namespace_processes(namespace: str) -> None:
    done = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True)
    for pid in (int(p) for p in done.stdout.split()):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def remove_leftovers() -> list[str]:
    """Delete this harness's namespaces whose owner process no longer runs (a run killed before cleanup)."""
    removed = []
    for path in _NETNS_DIR.glob(f"{PREFIX}*") if _NETNS_DIR.is_dir() else []:
        owner = path.name[len(PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            _kill_namespace_processes(path.name)
            subprocess.run(["ip", "netns", "del", path.name], capture_output=True)
            removed.append(path.name)
    return removed
