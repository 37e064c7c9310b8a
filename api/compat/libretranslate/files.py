"""LibreTranslate's file translation: POST /translate_file (multipart `file`, `source`, `target`) waits
for a transq document job and answers {"translatedFileUrl"}; GET /download_file/<id>/<key>/<name> is that
file, its URL its credential (api.compat.document_keys), as LibreTranslate's own download URL is."""

from __future__ import annotations

from urllib.parse import quote

from flask import request

from api.compat.document_keys import check_document_key, document_key
from api.compat.libretranslate.params import blueprint, required, upload
from api.compat.waiting import finished
from api.current import services
from api.documents.blueprint import submit_document, translated_document
from api.documents.download_names import download_name
from shared.document_formats import FILE_EXTENSIONS
from shared.errors import NotFound
from shared.store.job_record import is_job_id

bp = blueprint("libretranslate_files")


@bp.post("/translate_file")
def translate_file():  # type: ignore[no-untyped-def]
    source, target = str(required("source")).lower(), str(required("target")).lower()
    data, filename, media_type = upload()
    job = finished(submit_document({"source_lang": source, "target_lang": target}, data, filename, media_type))
    name = download_name(
        job.document.filename if job.document else None, job.id, FILE_EXTENSIONS[job.format], job.route
    )
    # TRANSQ_PUBLIC_URL where set: the request's Host header is the client's to choose (and a proxy's to change)
    base = services().settings.public_url.rstrip("/") + "/" if services().settings.public_url else request.host_url
    url = f"{base}download_file/{job.id}/{document_key(job.id)}/{quote(name, safe='')}"
    return {"translatedFileUrl": url}


@bp.get("/download_file/<job_id>/<key>/<name>")
def download_file(job_id: str, key: str, name: str):  # type: ignore[no-untyped-def]
    """Open (no API key): the id and the key in the URL are the credential."""
    job = services().store.get(job_id) if is_job_id(job_id) else None
    if job is None:
        raise NotFound("no such file")
    check_document_key(job.id, key)
    return translated_document(job)
