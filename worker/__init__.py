"""transq's background processes, a folder each with its entry module, all shipped in the worker image:

    translation/  the translation worker (`python -m worker.translation`): one model, rounds of jobs
    documents/    the document stage (`celery -A worker.documents.stage worker`): parsing and rendering
    callbacks/    the callback deliverer (`python -m worker.callbacks`): signed POSTs of finished jobs

None of them imports `api`, and only the translation worker loads torch.
"""
