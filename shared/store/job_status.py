"""The names a job's life is spoken in, each written once: its statuses (with the rank the Lua scripts
enforce: a status change must raise it) and what the store's scripts answer when asked to create, claim or
move a job. They are StrEnums, so they compare equal to, and are stored as, the plain strings."""

from __future__ import annotations

from enum import StrEnum


class JobStatus(StrEnum):
    """A document job starts `parsing` (the document stage) and is `rendering` between its translation and
    its success; a text job starts `queued`."""

    PARSING = "parsing"
    QUEUED = "queued"
    RUNNING = "running"
    RENDERING = "rendering"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def final(self) -> bool:
        return self.rank == FINAL_RANK


FINAL_RANK = 4
_RANK = {
    JobStatus.PARSING: 0,
    JobStatus.QUEUED: 1,
    JobStatus.RUNNING: 2,
    JobStatus.RENDERING: 3,
    JobStatus.SUCCEEDED: FINAL_RANK,
    JobStatus.FAILED: FINAL_RANK,
    JobStatus.CANCELLED: FINAL_RANK,
}
FINAL_STATUSES = tuple(status for status in JobStatus if status.final)


def lua_rank_table() -> str:
    """`local rank = {parsing=0, ...}`: the ranks above, for the store's Lua scripts."""
    entries = ", ".join(f"{status.value}={status.rank}" for status in JobStatus)
    return f"local rank = {{{entries}}}\n"


class Creation(StrEnum):
    """What creating a job did (shared.store.jobs.Created)."""

    CREATED = "created"
    EXISTS = "exists"  # the Idempotency-Key names a job already
    OVERLOADED = "overloaded"  # the queue was at its cap: nothing written
    OVER_QUOTA = "over_quota"  # the client's storage is full: nothing written
    TAKEN_BACK = "taken_back"  # the job was taken back before this create ran (api.acceptance): nothing written


class ClaimOutcome(StrEnum):
    """What trying to take a job did (shared.store.jobs.Claim)."""

    CLAIMED = "claimed"
    LEASED = "leased"  # another worker holds it
    FINAL = "final"
    MISSING = "missing"
    LOST = "lost"  # its workers died too often: failed worker_lost


class Move(StrEnum):
    """What a status change, progress write or cancel did."""

    OK = "ok"
    REFUSED = "refused"  # the job was already past that status (final, for a cancel)
    MISSING = "missing"
    FENCED = "fenced"  # claimed again since the writer's fence: nothing written
    STOPPED = "stopped"  # a progress write for a job no longer running
