"""What several of transq's processes use, by what it is:

contract/          the public HTTP contract (requests, views, OpenAPI parts) and the job view
store/             the Redis store: jobs and their scripts, keys, documents, glossaries, quotas, the
                   sentence cache, the worker registry, and the clients they are built on
routing/           routes (which model serves which pair), the served route table, language detection
text/              splitting texts into sentences, glossaries and term protection
errors.py          every error code and its HTTP status, one exception type per failure
document_formats.py, settings.py, celery_factory.py, callback_policy.py, memory.py, logging_setup.py
"""
