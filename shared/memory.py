"""How much memory this process may use: the container's cgroup limit, not the host's RAM."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import psutil

log = logging.getLogger(__name__)

# Limits at or above this are "no limit" (cgroup v1 reports a page-aligned 2**63-ish number).
_UNLIMITED = 1 << 60


@dataclass(frozen=True)
class MemoryStatus:
    limit_bytes: int
    used_bytes: int
    source: str  # "cgroup2", "cgroup1" or "host"

    @property
    def available_bytes(self) -> int:
        return max(0, self.limit_bytes - self.used_bytes)


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return None if value >= _UNLIMITED else value


def _stat_value(path: Path, names: tuple[str, ...]) -> int:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return 0
    stats = dict(line.split(maxsplit=1) for line in lines if " " in line)
    for name in names:
        if name in stats:
            return int(stats[name])
    return 0


def probe_memory(cgroup_root: str | os.PathLike[str] = "/sys/fs/cgroup") -> MemoryStatus:
    """The limit and usage that matter: the smaller of the cgroup's (v2 or v1) and the host's.

    Usage in a cgroup excludes inactive file pages, which the kernel reclaims
    before it OOM-kills anything.
    """
    root = Path(cgroup_root)
    host = psutil.virtual_memory()
    host_used = host.total - host.available
    if (root / "memory.max").exists() or (root / "memory.current").exists():
        limit = _read_int(root / "memory.max")
        current = _read_int(root / "memory.current")
        inactive = _stat_value(root / "memory.stat", ("inactive_file",))
        source = "cgroup2"
    elif (root / "memory" / "memory.limit_in_bytes").exists():
        limit = _read_int(root / "memory" / "memory.limit_in_bytes")
        current = _read_int(root / "memory" / "memory.usage_in_bytes")
        inactive = _stat_value(root / "memory" / "memory.stat", ("total_inactive_file", "inactive_file"))
        source = "cgroup1"
    else:
        return MemoryStatus(host.total, host_used, "host")
    if limit is None or limit >= host.total:
        return MemoryStatus(host.total, host_used, "host")
    used = max(0, (current or 0) - inactive)
    return MemoryStatus(limit, used, source)


def allowed_cpus(cgroup_root: Path = Path("/sys/fs/cgroup"), own: Path = Path("/proc/self/cgroup")) -> int:
    """CPUs this process may use: affinity and the CPU quota (v2 cpu.max, v1 cfs) of its cgroup and the
    cgroups above it (a container sees its own at the root; a process in a child cgroup finds it by
    /proc/self/cgroup)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    quotas = [q for q in (_cpu_quota(folder) for folder in _cpu_cgroups(cgroup_root, own)) if q]
    if quotas:
        cpus = min(cpus, max(1, int(min(quotas) + 0.5)))
    return max(1, cpus)


def _cpu_cgroups(root: Path, own: Path) -> list[Path]:
    """The folders that may hold this process's CPU quota: its cgroup's (v2, and v1's cpu controller) and
    their parents, and the root's."""
    folders = [root, root / "cpu", root / "cpu,cpuacct"]
    try:
        lines = own.read_text().splitlines()
    except OSError:
        return folders
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, path = fields
        if controllers and "cpu" not in controllers.split(","):
            continue
        bases = [root, root / "unified"] if not controllers else [root / "cpu", root / "cpu,cpuacct"]
        parts = Path(path).relative_to("/").parts if path.startswith("/") else ()
        for depth in range(1, len(parts) + 1):
            folders += [base.joinpath(*parts[:depth]) for base in bases]
    return folders


def _cpu_quota(folder: Path) -> float | None:
    try:
        if (folder / "cpu.max").exists():
            quota, period = (folder / "cpu.max").read_text().split()
            return None if quota == "max" else int(quota) / int(period)
        quota_path = folder / "cpu.cfs_quota_us"
        if quota_path.exists():
            quota = int(quota_path.read_text())
            period = int((folder / "cpu.cfs_period_us").read_text())
            return None if quota <= 0 else quota / period
    except (OSError, ValueError):
        return None
    return None


def process_rss_bytes() -> int:
    return psutil.Process().memory_info().rss


def peak_rss_bytes() -> int:
    """This process's peak resident set (VmHWM) since it started; 0 if unknown."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
