"""Tenant isolation among a deliverer's senders: at most TRANSQ_CALLBACK_PER_RECEIVER attempts in flight to
one receiver (the host and port of its URL) and TRANSQ_CALLBACK_PER_OWNER for one API key's jobs (none for
jobs without an owner: API keys off). A due callback whose receiver or key is at its limit is not taken: it
is deferred in the outbox, uncounted, for TRANSQ_CALLBACK_TIMEOUT + 1 s (by then an attempt that filled the
limit has ended), and woken as soon as one of them ends; the free senders go to the callbacks behind it. So
receivers that answer slowly, each attempt cut at TRANSQ_CALLBACK_TIMEOUT, hold only their own share of the
senders. The counts are this process's (several deliverers: each keeps its own limits)."""

from __future__ import annotations

from collections import Counter
from urllib.parse import urlsplit

from shared.callback_hosts import DEFAULT_PORTS, normal_host
from worker.callbacks.outbox import Due

MAX_WAITING = 50_000  # deferred callbacks remembered to wake; more are due when their deferral ends


def receiver_of(url: str) -> str:
    """`host:port` of a callback URL (the URL itself when it has none: the policy refuses it at delivery)."""
    try:
        parts = urlsplit(url)
        host, port = normal_host(parts.hostname or ""), parts.port or DEFAULT_PORTS.get(parts.scheme, 0)
    except ValueError:
        return url
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}" if host else url


class Slots:
    """Attempts in flight by receiver and by owner, and the callbacks deferred while one of theirs was full."""

    def __init__(self, per_receiver: int, per_owner: int):
        self.per_receiver = per_receiver
        self.per_owner = per_owner
        self.receivers: Counter[str] = Counter()
        self.owners: Counter[str] = Counter()
        self.waiting: dict[str, dict[str, int]] = {}  # "receiver …"/"owner …" -> job id -> due at; oldest first
        self.waits_for: dict[str, str] = {}  # job id -> the receiver or owner it waits for

    def choose(self, found: list[Due], room: int) -> tuple[list[Due], dict[str, list[Due]]]:
        """Up to `room` of `found`, in order, whose receiver and owner have room (counting those chosen before
        them); and those passed over on the way, by the receiver or owner that was full."""
        receivers, owners = Counter(self.receivers), Counter(self.owners)
        chosen: list[Due] = []
        blocked: dict[str, list[Due]] = {}
        for due in found:
            if len(chosen) >= room:
                break
            receiver = receiver_of(due.url)
            if receivers[receiver] >= self.per_receiver:
                blocked.setdefault(f"receiver {receiver}", []).append(due)
            elif due.owner and owners[due.owner] >= self.per_owner:
                blocked.setdefault(f"owner {due.owner}", []).append(due)
            else:
                chosen.append(due)
                receivers[receiver] += 1
                owners[due.owner] += 1 if due.owner else 0
        return chosen, blocked

    def started(self, due: Due) -> None:
        self._unwait(due.job_id)
        self.receivers[receiver_of(due.url)] += 1
        if due.owner:
            self.owners[due.owner] += 1

    def ended(self, due: Due) -> list[tuple[str, int]]:
        """The attempt of `due` is over: the deferred callbacks to wake now (job id, the time it was deferred
        to), the oldest waiting for its receiver and the oldest waiting for its owner."""
        woken: list[tuple[str, int]] = []
        groups = [(f"receiver {receiver_of(due.url)}", receiver_of(due.url), self.receivers)]
        if due.owner:
            groups.append((f"owner {due.owner}", due.owner, self.owners))
        for group, name, counts in groups:
            counts[name] -= 1
            if counts[name] <= 0:
                del counts[name]
            queue = self.waiting.get(group)
            if queue:
                job_id = next(iter(queue))
                woken.append((job_id, queue[job_id]))
                self._unwait(job_id)
        return woken

    def deferred(self, group: str, job_ids: list[str], until: int) -> None:
        """`job_ids`, passed over because `group` was full, wait in the outbox until `until` (Redis's ms); one
        deferred again keeps its place in its queue."""
        for job_id in job_ids:
            if self.waits_for.get(job_id, group) != group:
                self._unwait(job_id)
            if job_id in self.waits_for or len(self.waits_for) < MAX_WAITING:
                self.waiting.setdefault(group, {})[job_id] = until
                self.waits_for[job_id] = group

    def _unwait(self, job_id: str) -> None:
        group = self.waits_for.pop(job_id, None)
        if group is not None:
            queue = self.waiting[group]
            del queue[job_id]
            if not queue:
                del self.waiting[group]
