"""Documents that keep their formatting, as one package: the API's side and the document stage's.

    formats/         parsing and rendering each format (api.documents.formats.prepare)
    blueprint.py     POST /v1/documents and GET /v1/jobs/<id>/document
    job_documents.py what a job stores of an upload, its translated documents read back, document_info(job)
    download_names.py the file name a translated document downloads as
    stage.py         the document stage's Celery app (create_stage(); `celery -A api.documents.stage`)
    stage_work.py    the stage's work on one job: parse, then render

Importing the package imports none of them.
"""
