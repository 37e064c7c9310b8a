"""A dataclass as a Redis hash, both ways, derived from its fields (shared.store.job_record.Job's record).

Each field is a hash field of its own name, or of the name `stored(name=...)` gives it, encoded as its type
says: a str as it is, an int or a float as its digits, a bool as '1', an enum by its value, a list or a
dict as JSON. A nested dataclass's fields are fields of the same hash (its value is None when none of
them is there). Nothing is written for a None, for a false bool, for an empty value of a field stored
`sparse`, nor for a field stored `written=False` (the store's scripts write it). A field that is absent
or empty reads as its default; one made by a factory, or without a default, as its type's empty value
(0, '', [], {}), and an Optional one as None."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from enum import Enum
from typing import Any, Callable, Generic, Mapping, TypeVar

T = TypeVar("T")
_META = "transq.hash"


@dataclasses.dataclass(frozen=True)
class _Stored:
    name: str = ""  # the hash field's name ('' for the attribute's)
    sparse: bool = False  # not written when empty
    written: bool = True  # False: only the store's scripts write it


def stored(*, name: str = "", sparse: bool = False, written: bool = True, **field: Any) -> Any:
    """A dataclass field (dataclasses.field's `default`, `default_factory`, ...) with how its hash stores it."""
    return dataclasses.field(**field, metadata={_META: _Stored(name, sparse, written)})


def _json_encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _encoding(kind: type) -> tuple[Callable[[Any], str], Callable[[str], Any]]:
    """How a value of `kind` is written and read back."""
    if kind in (list, dict):
        return _json_encode, json.loads
    if kind is bool:
        return lambda value: "1", lambda text: text == "1"
    if kind is float:
        return repr, float
    if kind is int:
        return str, int
    if isinstance(kind, type) and issubclass(kind, Enum):
        return lambda value: kind(value).value, kind
    if kind is str:
        return str, str
    raise TypeError(f"no hash encoding for {kind!r}")


@dataclasses.dataclass(frozen=True)
class _Column:
    """One attribute: its hash field (or, for a nested dataclass, its codec) and how it is encoded."""

    name: str
    encode: Callable[[Any], str]
    decode: Callable[[str], Any]
    empty: Callable[[], Any]
    sparse: bool
    written: bool
    nested: HashCodec[Any] | None = None

    def write(self, value: Any, into: dict[str, str]) -> None:
        if value is None or (self.sparse and not value) or value is False:
            return
        if self.nested is not None:
            into.update(self.nested.encode(value))
        else:
            into[self.name] = self.encode(value)

    def read(self, data: Mapping[str, str]) -> Any:
        if self.nested is not None:
            present = any(data.get(name) for name in self.nested.names)
            return self.nested.decode(data) if present else self.empty()
        text = data.get(self.name)
        return self.decode(text) if text else self.empty()


def _column(field: dataclasses.Field[Any], hint: Any) -> _Column:
    how: _Stored = field.metadata.get(_META, _Stored())
    args = typing.get_args(hint)
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args
    kind = next(a for a in args if a is not type(None)) if optional else hint
    kind = typing.get_origin(kind) or kind
    nested = HashCodec(kind) if dataclasses.is_dataclass(kind) else None
    if field.default is not dataclasses.MISSING:
        empty: Callable[[], Any] = lambda: field.default
    elif optional:
        empty = lambda: None
    elif nested is not None:
        empty = lambda: nested.decode({})
    else:
        empty = kind  # str(), int(), list(), ...
    encode, decode = (str, str) if nested is not None else _encoding(kind)
    return _Column(how.name or field.name, encode, decode, empty, how.sparse, how.written, nested)


class HashCodec(Generic[T]):
    """Encodes instances of the dataclass `cls` as hash fields and decodes them back."""

    def __init__(self, cls: type[T]):
        self.cls = cls
        hints = typing.get_type_hints(cls)
        self.columns = {f.name: _column(f, hints[f.name]) for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        self.names = tuple(
            name
            for column in self.columns.values()
            for name in (column.nested.names if column.nested is not None else (column.name,))
        )

    def decode(self, data: Mapping[str, str]) -> T:
        return self.cls(**{attr: column.read(data) for attr, column in self.columns.items()})

    def encode(self, value: T) -> dict[str, str]:
        """Every field the record is written with (not those only the scripts write)."""
        return self.encode_values(
            **{attr: getattr(value, attr) for attr, column in self.columns.items() if column.written}
        )

    def encode_values(self, **values: Any) -> dict[str, str]:
        """The hash fields of some attributes' values (a partial write), encoded as the whole record's are."""
        fields: dict[str, str] = {}
        for attr, value in values.items():
            self.columns[attr].write(value, fields)
        return fields

    def encode_part(self, value: Any) -> dict[str, str]:
        """The hash fields of a dataclass whose fields are some of `cls`'s attributes (an outcome written to
        the record: shared.store.jobs.Translation)."""
        return self.encode_values(**{f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
