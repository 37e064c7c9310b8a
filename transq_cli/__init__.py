"""The `transq` command line: dev, make-test-model, translate, status, settings."""
