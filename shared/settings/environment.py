"""Reading settings from the environment: secrets from files, values parsed by their field's type, and
the manual's table of every setting (`transq settings`)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping


def setting(default: Any, help: str) -> Any:
    """A dataclass field documented in the settings table (`transq settings`, docs/settings.md)."""
    return dataclasses.field(default=default, metadata={"help": help})


def environment_values(cls: type, environ: Mapping[str, str]) -> dict[str, Any]:
    """Each field of `cls` given as TRANSQ_<NAME>, else in the file named by TRANSQ_<NAME>_FILE (a Docker or
    Kubernetes secret; one trailing newline dropped), parsed by the field's type."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        raw = environ.get(f"TRANSQ_{f.name.upper()}")
        if raw is None and environ.get(f"TRANSQ_{f.name.upper()}_FILE"):
            raw = read_secret(f"TRANSQ_{f.name.upper()}_FILE", environ[f"TRANSQ_{f.name.upper()}_FILE"])
        if raw is not None:
            values[f.name] = parse_value(f.name, type(f.default), raw)
    return values


def environment_of(settings: Any) -> dict[str, str]:
    """Settings as TRANSQ_* variables, for child processes."""
    return {f"TRANSQ_{f.name.upper()}": format_value(getattr(settings, f.name)) for f in dataclasses.fields(settings)}


def read_secret(variable: str, path: str) -> str:
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as exc:
        raise ValueError(f"{variable}={path!r}: cannot read it ({exc.strerror})") from None
    return text[:-1] if text.endswith("\n") else text


def parse_value(name: str, kind: type, raw: str) -> Any:
    try:
        if kind is bool:
            if raw.strip().lower() in ("1", "true", "yes", "on"):
                return True
            if raw.strip().lower() in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        return kind(raw)
    except ValueError:
        raise ValueError(f"TRANSQ_{name.upper()}={raw!r} is not a valid {kind.__name__}") from None


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def settings_table(cls: type) -> str:
    """The Markdown table of every setting of `cls` (Settings), for the manual: `transq settings`."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for f in dataclasses.fields(cls):
        default = format_value(f.default)
        rows.append(f"| `TRANSQ_{f.name.upper()}` | `{default}` | {f.metadata['help']} |")
    return "\n".join(rows)
