"""`transq memory import|export|list|delete`: translation memories through the HTTP API (POST /v1/memories)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

from transq_cli.client import TransqClient, TransqError


def add_commands(commands: Any, client_options: Callable[[argparse.ArgumentParser], None]) -> None:
    memory = commands.add_parser("memory", help="import, export, list or delete translation memories")
    actions = memory.add_subparsers(dest="action", required=True)
    imported = actions.add_parser("import", help="store a TMX, TSV or CSV file as a memory; prints its id")
    imported.add_argument("file", help="a .tmx, .tsv or .csv file (TSV/CSV: source, target columns)")
    imported.add_argument("--from", dest="source", required=True, help="source language, e.g. zh")
    imported.add_argument("--to", dest="target", required=True, help="target language, e.g. en")
    imported.add_argument("--name", help="its name (default: the file's)")
    exported = actions.add_parser("export", help="write a memory as TMX 1.4")
    exported.add_argument("memory_id")
    exported.add_argument("-o", "--output", help="write here (default: standard output)")
    deleted = actions.add_parser("delete", help="delete a memory")
    deleted.add_argument("memory_id")
    listed = actions.add_parser("list", help="this API key's memories: id, pair, entries, name")
    for parser in (imported, exported, deleted, listed):
        client_options(parser)


def run(args: argparse.Namespace) -> int:
    client = TransqClient(args.url, args.api_key)
    try:
        if args.action == "import":
            path = Path(args.file)
            stored = client.import_memory(path.name, path.read_bytes(), args.source, args.target, args.name)
            sys.stderr.write(f"{stored['entry_count']} entries stored, {stored['skipped']} units skipped\n")
            sys.stdout.write(stored["id"] + "\n")
        elif args.action == "export":
            data = client.export_memory(args.memory_id)
            if args.output:
                Path(args.output).write_bytes(data)
            else:
                sys.stdout.buffer.write(data)
        elif args.action == "delete":
            client.delete_memory(args.memory_id)
        else:
            for found in client.memories():
                pair = f"{found['source_lang']}-{found['target_lang']}"
                sys.stdout.write(f"{found['id']}\t{pair}\t{found['entry_count']}\t{found['name']}\n")
    except (TransqError, OSError) as exc:
        sys.stderr.write(f"transq: {exc}\n")
        return 1
    return 0
