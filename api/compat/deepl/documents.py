"""DeepL's document translation: POST /v2/document (upload: `document_id` and `document_key`), POST
/v2/document/<id> (status) and POST /v2/document/<id>/result (the translated file); a transq document job
underneath (api.documents), for every format transq translates."""

from __future__ import annotations

import json
import time
from pathlib import PurePosixPath

from api.compat.deepl.params import UNSUPPORTED, Params, language
from api.compat.deepl.shape import blueprint
from api.compat.document_keys import check_document_key, document_key
from api.compat.waiting import JobFailed
from api.current import services
from api.documents.blueprint import read_upload, submit_document, translated_document
from api.jobs import load_job
from shared.errors import BadRequest, Unavailable
from shared.store.job_record import Job
from shared.store.job_status import JobStatus

bp = blueprint("deepl_documents")
_FIELDS = ("source_lang", "target_lang", "glossary_id", "formality", "output_format", "filename", *UNSUPPORTED)
_NOT_FOR_DOCUMENTS = ("translation_memory_id", "translation_memory_threshold")  # transq's memories: plain text
_STATUS = {
    JobStatus.PARSING: "queued",
    JobStatus.QUEUED: "queued",
    JobStatus.RUNNING: "translating",
    JobStatus.RENDERING: "translating",
    JobStatus.SUCCEEDED: "done",
}


@bp.post("/document")
def upload():  # type: ignore[no-untyped-def]
    """A multipart form: `file`, `target_lang`, optional `source_lang` (else detected), `glossary_id`,
    `filename`; `output_format` only as the file's own format (transq does not convert)."""
    fields, data, filename, media_type = read_upload(_FIELDS + _NOT_FOR_DOCUMENTS)
    params = Params({key: [value] for key, value in fields.items()})
    params.check_supported()
    for name in _NOT_FOR_DOCUMENTS:
        if params.text(name) is not None:
            raise BadRequest(f"Parameter '{name}' is not supported for documents by this server.")
    filename = fields.get("filename") or filename
    target = language(params.text("target_lang", required=True))
    source = language(params.text("source_lang"))
    output = params.text("output_format")
    if output and filename and output.lower().lstrip(".") != PurePosixPath(filename).suffix.lower().lstrip("."):
        raise BadRequest("Value for 'output_format' not supported: this server returns the document's own format.")
    options = {"source_lang": source or "auto", "target_lang": target or ""}
    if params.text("glossary_id"):
        options["glossary_id"] = str(params.text("glossary_id"))
    job = submit_document(options, data, filename, media_type)
    return {"document_id": job.id, "document_key": document_key(job.id)}


def _job(document_id: str) -> Job:
    """The caller's document job, when the request presents its key."""
    job = load_job(document_id)
    check_document_key(job.id, Params.of_request().text("document_key", required=True))
    return job


@bp.post("/document/<document_id>")
def status(document_id: str):  # type: ignore[no-untyped-def]
    job = _job(document_id)
    answer: dict[str, object] = {"document_id": job.id, "status": _STATUS.get(job.status, "error")}
    if job.status == JobStatus.SUCCEEDED:
        answer["billed_characters"] = _billed(job)
    elif job.finished:
        answer["error_message"] = str((job.error or {}).get("message", f"the job was {job.status}"))
    else:
        answer["seconds_remaining"] = _remaining(job)
    return answer


@bp.post("/document/<document_id>/result")
def result(document_id: str):  # type: ignore[no-untyped-def]
    """The translated document; 503 until it is done (the client waits and asks again)."""
    job = _job(document_id)
    if job.status == JobStatus.FAILED:
        raise JobFailed(job)
    if job.status != JobStatus.SUCCEEDED:
        raise Unavailable(f"document {job.id} is not translated yet ({job.status})", retry_after=1)
    return translated_document(job)


def _billed(job: Job) -> int:
    """The characters the job was charged: its parsed text's (shared.store.quota's settle), else its upload's."""
    settled = services().quota.settled(services().keys.job(job.id))
    if settled is not None:
        return settled
    layout = json.loads(job.document.layout) if job.document else {}
    return int((layout.get("quota") or {}).get("characters", 0))


def _remaining(job: Job) -> int:
    """A guess: the time so far, times what is left over what is done (a second or more)."""
    done, total = job.sentences_done, job.sentences_total
    if not done or not total:
        return 1
    return max(1, round((time.time() - job.submitted) * (total - done) / done))
