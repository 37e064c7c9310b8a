"""The API's side of documents: uploads, their jobs and their downloads (the document stage, which parses
and renders them, is a process of its own: worker.documents).

    blueprint.py      POST /v1/documents and GET /v1/jobs/<id>/document
    job_documents.py  what a job stores of an upload, its translated documents read back, document_info(job)
    download_names.py the file name a translated document downloads as
"""
