"""`transq detect FILE...`: each file's language and confidence, as the API detects it (POST /v1/detect)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from transq_cli.client import TransqClient, TransqError


def detect_files(args: argparse.Namespace) -> int:
    """One line per file: `zh<TAB>0.987<TAB>FILE` (`-` for an undetermined language); - reads standard input."""
    names = args.files or ["-"]
    try:
        texts = [sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8") for name in names]
        found = TransqClient(args.url, args.api_key).detect(texts)
    except (TransqError, OSError, UnicodeDecodeError) as exc:
        sys.stderr.write(f"transq: {exc}\n")
        return 1
    for name, detection in zip(names, found):
        sys.stdout.write(f"{detection['language'] or '-'}\t{detection['confidence']:.3f}\t{name}\n")
    return 0
