"""A document job's data against a real Redis: its layout and file name are fields of its record (`document`
and `filename`, as stored since documents were first kept), read with the rest of the job; its compressed
source is read back as bytes through the process's one, decoding, broker client."""

from shared.store.document_store import DocumentStore, compress, decompress
from shared.store.job_record import DocumentRecord, Job, new_job_id, utc_now
from shared.store.job_status import JobStatus
from shared.store.jobs import JobStore
from shared.store.keys import Keys
from tests.stack import stack_settings


def test_a_document_is_stored_and_read_with_its_job(redis_client):
    jobs = JobStore(redis_client, Keys(), 100, 50)
    document, plain = (
        Job(id=new_job_id(), status=status, texts=[], model="m", created_at=utc_now(), sentences_total=0, format="html")
        for status in (JobStatus.PARSING, JobStatus.QUEUED)
    )
    document.document = DocumentRecord('{"format": "html", "filename": "a.html"}', "a.html")
    jobs.create(document)
    jobs.create(plain)
    assert jobs.get(document.id).document == document.document
    fields = redis_client.hgetall(Keys().job(document.id))
    assert (fields["document"], fields["filename"]) == ('{"format": "html", "filename": "a.html"}', "a.html")
    assert jobs.get(plain.id).document is None and "document" not in redis_client.hgetall(Keys().job(plain.id))
    assert jobs.get(document.id).format == "html"
    unnamed = Job(
        id=new_job_id(), status=JobStatus.PARSING, texts=[], model="m", created_at=utc_now(), sentences_total=0
    )
    unnamed.document = DocumentRecord("{}")
    jobs.create(unnamed)
    assert jobs.get(unnamed.id).document == DocumentRecord("{}", "")
    assert "filename" not in redis_client.hgetall(Keys().job(unnamed.id))


def test_compressed_data_is_read_as_bytes_through_the_decoding_client(redis_server, redis_client, tmp_path):
    settings = stack_settings(redis_server.url, tmp_path / "no-model")
    documents = DocumentStore(redis_client, Keys(), settings)
    packed = compress("你好。".encode() + bytes(range(256)))
    redis_client.set(Keys().document_source("a" * 32), packed)
    assert documents.source("a" * 32) == packed and documents.output("a" * 32) is None
    assert decompress(documents.source("a" * 32), 1000).startswith("你好。".encode())
    redis_client.set("other", "文字")
    assert redis_client.get("other") == "文字"  # the client still decodes every other answer
