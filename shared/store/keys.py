"""Every Redis key transq uses, in one place."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Keys:
    """Key names under one prefix (default `transq:`)."""

    prefix: str = "transq:"

    def job(self, job_id: str) -> str:
        return f"{self.prefix}job:{job_id}"

    def lease(self, job_id: str) -> str:
        return f"{self.prefix}lease:{job_id}"

    def pending(self, route: str) -> str:
        """Sorted set of a route's queued job ids (score: submission time) that its workers batch from."""
        return f"{self.prefix}pending:{route}"

    def running(self, route: str) -> str:
        """Sorted set of a route's claimed, running job ids (score: lease deadline, Redis time in ms), where
        live workers find the jobs whose lease lapsed (see claim_scripts.LAPSED)."""
        return f"{self.prefix}running:{route}"

    def queue(self, route: str) -> str:
        """The Celery queue of a route's wake-up messages."""
        return f"{self.prefix}jobs:{route}"

    @property
    def routes(self) -> str:
        """Hash of every route a worker has served: route key -> its model and language pair (JSON)."""
        return f"{self.prefix}routes"

    def partial(self, job_id: str) -> str:
        """Hash of a running job's translations so far, by sentence index."""
        return f"{self.prefix}partial:{job_id}"

    def events(self, job_id: str) -> str:
        """Stream of a job's events (its sentences as recorded, its status and progress), expiring with its
        record (shared.store.job_events)."""
        return f"{self.prefix}events:{job_id}"

    def event_streams(self, client: str) -> str:
        """Sorted set of the event streams a client has open (slot -> when it lapses, Redis time in ms)."""
        return f"{self.prefix}eventstreams:{hashlib.sha256(client.encode()).hexdigest()[:32]}"

    @property
    def callbacks_due(self) -> str:
        """The callback outbox: sorted set of final jobs' ids whose callback is pending, scored by when it is
        next due (Redis time, ms); a deliverer's take moves an entry to its lease's end (worker.callbacks)."""
        return f"{self.prefix}callbacks:due"

    def wake(self, job_id: str) -> str:
        """Set while a re-sent wake-up message of a waiting job is on its way (one per job at a time)."""
        return f"{self.prefix}wake:{job_id}"

    @property
    def documents_queue(self) -> str:
        """The Celery queue of the document stage (parsing and rendering, worker.documents.stage)."""
        return f"{self.prefix}documents"

    def stage_lease(self, job_id: str) -> str:
        """A document job's lease while a document stage process parses or renders it (its holder's id)."""
        return f"{self.prefix}stagelease:{job_id}"

    @property
    def staged(self) -> str:
        """Sorted set of the document jobs a document stage took (score: lease deadline, Redis time in ms),
        where live stages find those whose lease lapsed (see shared.store.stage_scripts.LAPSED)."""
        return f"{self.prefix}staged"

    def taken_back(self, job_id: str) -> str:
        """A job the API took back (api.acceptance): a create of that id still on its way (sent to a primary that
        froze, say) finds this and writes nothing, for TRANSQ_JOB_TTL."""
        return f"{self.prefix}takenback:{job_id}"

    def document_source(self, job_id: str) -> str:
        """A document job's sources, compressed, until it is rendered (TRANSQ_DOCUMENT_TTL)."""
        return f"{self.prefix}docsrc:{job_id}"

    def document_output(self, job_id: str) -> str:
        """A document job's translated documents, compressed (TRANSQ_DOCUMENT_TTL)."""
        return f"{self.prefix}docout:{job_id}"

    def usage(self, client: str) -> str:
        """Sorted set of what a client holds in the broker (`<job>:<kind>:<bytes>` by expiry); its total
        bytes are in `<this key>:bytes` (shared.store.job_scripts, USAGE)."""
        return f"{self.prefix}usage:{hashlib.sha256(client.encode()).hexdigest()[:32]}"

    def quota(self, client: str, period: str, label: str) -> str:
        """Hash of the characters, cached characters and jobs a client submitted in one UTC day or month
        (`label`: 20261201 or 202612; shared.store.quota)."""
        return f"{self.prefix}quota:{period}:{label}:{hashlib.sha256(client.encode()).hexdigest()[:32]}"

    @property
    def quota_totals(self) -> str:
        """Hash of every client's characters (`<client>:chars`) and cached characters, all time (/metrics)."""
        return f"{self.prefix}quota:totals"

    def glossary(self, owner: str, glossary_id: str) -> str:
        """A stored glossary (JSON), under its owner: another key's lookup of the id finds nothing."""
        return f"{self.prefix}glossary:{hashlib.sha256(owner.encode()).hexdigest()[:32]}:{glossary_id}"

    def memory(self, owner: str, memory_id: str) -> str:
        """A translation memory's hash (name, languages, counts), under its owner; its entries are in `<this
        key>:x` (digest -> number), `:e` (number -> [source, target]) and `:g` (bigram -> numbers:
        shared.store.memory_store)."""
        return f"{self.prefix}memory:{hashlib.sha256(owner.encode()).hexdigest()[:32]}:{memory_id}"

    def memories(self, owner: str) -> str:
        """Sorted set of an owner's translation memory ids by creation time (TRANSQ_MEMORY_MAX_STORED)."""
        return f"{self.prefix}memories:{hashlib.sha256(owner.encode()).hexdigest()[:32]}"

    def glossaries(self, owner: str) -> str:
        """Sorted set of an owner's stored glossary ids by creation time (their count is capped:
        TRANSQ_GLOSSARY_MAX_STORED)."""
        return f"{self.prefix}glossaries:{hashlib.sha256(owner.encode()).hexdigest()[:32]}"

    @property
    def key_id_secret(self) -> str:
        """The secret API key ids are made with when TRANSQ_KEY_ID_SECRET is empty (shared.store.key_ids)."""
        return f"{self.prefix}secret:key-ids"

    def idempotency(self, digest: str) -> str:
        return f"{self.prefix}idem:{digest}"

    @property
    def workers(self) -> str:
        """Sorted set of worker ids scored by their last heartbeat (unix seconds)."""
        return f"{self.prefix}workers"

    def worker(self, worker_id: str) -> str:
        return f"{self.prefix}worker:{worker_id}"

    def cache_namespace(self, route: str) -> str:
        """The cache namespace that the workers of a route publish for the API."""
        return f"{self.prefix}cache-ns:{route}"

    def cache_entry(self, namespace: str, digest: str) -> str:
        return f"{self.prefix}c:{namespace}:{digest}"

    @property
    def stats(self) -> str:
        """Hash of counters the workers and the API increment (exported by /metrics)."""
        return f"{self.prefix}stats"

    @property
    def histograms(self) -> str:
        return f"{self.prefix}hist"

    @property
    def replication_probe(self) -> str:
        """Written just before `WAIT`, so the wait covers every write made before it (shared.store.replication)."""
        return f"{self.prefix}replication-probe"
