"""A document job's record against a real Redis: its layout and file name are stored with the job, in
fields the job store does not read (shared.store.jobs.Job carries nothing of a document), and read back by the
document store."""

from shared.store.document_store import DocumentRecord, DocumentStore, compress, decompress
from shared.store.job_record import Job, new_job_id, utc_now
from shared.store.job_status import JobStatus
from shared.store.jobs import JobStore
from shared.store.keys import Keys
from tests.stack import stack_settings


def test_a_document_is_stored_with_its_job_but_read_on_its_own(redis_server, redis_client, tmp_path):
    settings = stack_settings(redis_server.url, tmp_path / "no-model")
    jobs, documents = JobStore(redis_client, Keys(), 100, 50), DocumentStore(redis_client, Keys(), settings)
    document, plain = (
        Job(id=new_job_id(), status=status, texts=[], model="m", created_at=utc_now(), sentences_total=0, format="html")
        for status in (JobStatus.PARSING, JobStatus.QUEUED)
    )
    record = DocumentRecord('{"format": "html", "filename": "a.html"}', "a.html")
    jobs.create(document, record_fields=record.fields())
    jobs.create(plain)
    assert documents.record(document.id) == record
    assert documents.record(plain.id) is None and documents.record("0" * 32) is None
    assert jobs.get(document.id).format == "html"
    unnamed = Job(
        id=new_job_id(), status=JobStatus.PARSING, texts=[], model="m", created_at=utc_now(), sentences_total=0
    )
    jobs.create(unnamed, record_fields=DocumentRecord("{}").fields())
    assert documents.record(unnamed.id) == DocumentRecord("{}", "")


def test_compressed_data_is_read_as_bytes_through_the_decoding_client(redis_server, redis_client, tmp_path):
    settings = stack_settings(redis_server.url, tmp_path / "no-model")
    documents = DocumentStore(redis_client, Keys(), settings)
    packed = compress("你好。".encode() + bytes(range(256)))
    redis_client.set(Keys().document_source("a" * 32), packed)
    assert documents.source("a" * 32) == packed and documents.output("a" * 32) is None
    assert decompress(documents.source("a" * 32), 1000).startswith("你好。".encode())
    redis_client.set("other", "文字")
    assert redis_client.get("other") == "文字"  # the client still decodes every other answer
