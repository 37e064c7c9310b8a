"""The document stage, a process of its own (`celery -A worker.documents.stage worker --concurrency 1`, the
`document` service): it parses uploaded documents into the texts a job translates, and renders the
translated documents, off the API's request path and under its own time and memory limits.

    stage.py       the stage's Celery app (create_stage()) and the failures of a job it runs
    stage_work.py  the stage's work on one job: parse, then render
    formats/       parsing and rendering each format (worker.documents.formats.prepare)

Importing the package imports none of them.
"""
