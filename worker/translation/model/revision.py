"""A model's revision, for cache keys: translations of two revisions never share an entry."""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path


def model_revision(model: str) -> str:
    """The model's revision: a digest of a local folder's config and weight files' metadata,
    or the resolved commit of a hub model in the local Hugging Face cache."""
    folder = Path(model)
    if folder.is_dir():
        digest = hashlib.sha256()
        for path in sorted(folder.iterdir()):
            if path.is_file():
                stat = path.stat()
                digest.update(f"{path.name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
                if path.suffix == ".json":
                    digest.update(path.read_bytes())
        return "local-" + digest.hexdigest()[:16]
    try:
        from huggingface_hub import snapshot_download

        snapshot = snapshot_download(model, local_files_only=True, allow_patterns=["config.json"])
        return "hub-" + os.path.basename(snapshot)
    except Exception:  # noqa: BLE001 - an unknown revision must never share cache entries with another
        return "unknown-" + secrets.token_hex(8)
