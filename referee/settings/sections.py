"""A TOML table decoded into a declared struct, and each mistake worded as one line.

A config file's format is its types: every section is a ``Section`` (a frozen
``msgspec.Struct`` that refuses unknown keys) whose fields carry their type,
default and bounds (``Annotated[int, Meta(ge=3, le=8)]``), and ``decode``
hands the parsed TOML to ``msgspec.convert``.  msgspec decides what is valid;
this module only words its refusal for an organiser: where msgspec points
(``$.bots[2].name``) becomes the key as the file spells it (``bots[2].name``),
and the field's declared type and the value found say what was wrong::

    league.toml: league.table_size: must be 3 to 8, got 9
    league.toml: league.tabel_size: unknown key; known keys here: name, format, ...
    league.toml: competition.name: is required (a string)

A field's ``Meta(extra=...)`` may add to the words: ``unit`` (``"seconds"``),
``expected`` (what to write instead, for a field whose type says it badly) and
``choices`` (``one_of``: a string from a fixed set).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import msgspec
import msgspec.inspect as mi

__all__ = ["ConfigError", "Section", "decode", "fail", "kind", "one_of"]


class ConfigError(ValueError):
    """One mistake in a config file: ``FILE: KEY: PROBLEM`` on one line."""


class Section(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A TOML table of a config file: its keys are the fields, in the order the file shows."""


S = TypeVar("S")

# msgspec's refusal ends with where it was: " - at `$.bots[2].name`".
_AT = re.compile(r"^(?P<what>.*) - at `\$(?P<path>[^`]*)`$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_UNKNOWN = re.compile(r"unknown field `(?P<name>.*)`", re.DOTALL)
_MISSING = re.compile(r"missing required field `(?P<name>.*)`", re.DOTALL)
# A key is the file's own text: a newline or a terminal escape in it is shown escaped.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_of(choices: tuple[str, ...]) -> msgspec.Meta:
    """A string field's bound: exactly one of ``choices`` (named in the refusal)."""
    pattern = "^(" + "|".join(re.escape(choice) for choice in choices) + ")$"
    return msgspec.Meta(pattern=pattern, extra={"choices": choices})


def fail(path: Path, key: str, problem: str) -> NoReturn:
    """Raise the ``ConfigError`` line for ``key`` (``""``: the file itself) of ``path``."""
    problem = " ".join(problem.split())  # one line, whatever a library said
    key = _CONTROL.sub(lambda found: repr(found[0])[1:-1], key)
    raise ConfigError(f"{path}: {key}: {problem}" if key else f"{path}: {problem}")


def decode(
    data: object,
    shape: type[S],
    path: Path,
    where: str = "",
    dec_hook: Callable[[type, Any], Any] | None = None,
) -> S:
    """``data`` (parsed TOML) as ``shape``, or the ``ConfigError`` naming the key and problem.

    ``where`` is the key ``data`` sits at in the file (``"league"``, ``"bots[2]"``;
    ``""`` for the whole file); ``dec_hook`` makes the custom field types (a ``Path``).
    """
    try:
        return msgspec.convert(data, shape, dec_hook=dec_hook)
    except msgspec.ValidationError as error:
        key, problem = explain(str(error), data, mi.type_info(shape), where)
        fail(path, key, problem)


def explain(message: str, data: object, shape: mi.Type, where: str) -> tuple[str, str]:
    """msgspec's refusal of ``data`` as ``shape``: the key it is about, and the problem."""
    at = _AT.match(message)
    what, steps = (at["what"], at["path"]) if at else (message, "")
    key, value, field_type = where, data, shape
    for name, index in _STEP.findall(steps):
        holder = _struct(field_type)
        items = _items(field_type)
        if name and holder is not None and isinstance(value, dict):
            field = next((f for f in holder.fields if f.encode_name == name), None)
            if field is None:
                break
            key, value, field_type = _join(key, name), value.get(name), field.type
        elif index and items is not None and isinstance(value, list):
            key, value, field_type = f"{key}[{index}]", value[int(index)], items
        else:
            break  # inside a value this layer does not look into: worded where it stopped
    holder = _struct(field_type)
    if holder is not None and isinstance(value, dict):
        unknown, missing = _UNKNOWN.search(what), _MISSING.search(what)
        if unknown:
            known = ", ".join(f.encode_name for f in holder.fields)
            return _join(key, unknown["name"]), f"unknown key; known keys here: {known}"
        if missing:
            field = next(f for f in holder.fields if f.encode_name == missing["name"])
            return _join(key, missing["name"]), f"is required ({_noun(field.type)})"
    return key, problem(field_type, value, what)


def problem(field_type: mi.Type, value: object, said: str = "") -> str:
    """Why ``value`` is not a ``field_type``, in the words of the file's documentation."""
    members, extra = _members(field_type)
    unit = str(extra.get("unit", ""))
    if "expected" in extra:
        return f"must be {extra['expected']}, got {kind(value)}"
    for member in members:
        if isinstance(member, mi.IntType):
            if not isinstance(value, int) or isinstance(value, bool):
                return f"must be a whole number, got {kind(value)}"
            return _out_of_range(member, value, unit)
    for member in members:
        if isinstance(member, mi.FloatType):
            if not isinstance(value, int | float) or isinstance(value, bool):
                return f"must be {_with_unit('a number', unit)}, got {kind(value)}"
            return _out_of_range(member, value, unit)
    first = members[0] if members else None
    if isinstance(first, mi.BoolType):
        return f"must be true or false, got {kind(value)}"
    if isinstance(first, mi.StrType | mi.CustomType):
        if not isinstance(value, str):
            return f"must be a string, got {kind(value)}"
        if "choices" in extra:
            return f"{value!r} is not one of {', '.join(map(repr, extra['choices']))}"
    if isinstance(first, mi.StructType | mi.DictType):
        return f"must be a table, got {kind(value)}"
    if isinstance(first, mi.ListType):
        return f"must be an array, got {kind(value)}"
    return said[:1].lower() + said[1:] if said else f"cannot be {kind(value)}"


def kind(value: object) -> str:
    """What a TOML value is, as the file shows it: ``a string ('x')``, ``a table``."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _out_of_range(bounds: mi.IntType | mi.FloatType, value: float, unit: str) -> str:
    low = bounds.ge if bounds.ge is not None else bounds.gt
    high = bounds.le if bounds.le is not None else bounds.lt
    got = f"got {_number(value)}"
    if bounds.gt == 0 and high is None:
        return f"must be {_with_unit('a positive number', unit)}, {got}"
    suffix = f" {unit}" if unit else ""
    if low is not None and high is not None:
        return f"must be {_number(low)} to {_number(high)}{suffix}, {got}"
    if low is not None:
        return f"must be at least {_number(low)}{suffix}, {got}"
    if high is not None:
        return f"must be at most {_number(high)}{suffix}, {got}"
    return f"is out of range, {got}"


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _with_unit(noun: str, unit: str) -> str:
    return f"{noun} of {unit}" if unit else noun


def _noun(field_type: mi.Type) -> str:
    """What a required field wants, for ``is required (...)``."""
    members, extra = _members(field_type)
    if "expected" in extra:
        return str(extra["expected"])
    first = members[0] if members else None
    if isinstance(first, mi.IntType):
        return "a whole number"
    if isinstance(first, mi.FloatType):
        return "a number"
    if isinstance(first, mi.BoolType):
        return "true or false"
    if isinstance(first, mi.StructType | mi.DictType):
        return "a table"
    return "a string"


def _members(field_type: mi.Type) -> tuple[list[mi.Type], dict[str, Any]]:
    """A field's types without ``None`` (absent in TOML), and the ``Meta.extra`` they carry."""
    extra: dict[str, Any] = {}
    members: list[mi.Type] = []
    pending = [field_type]
    while pending:
        current = pending.pop(0)
        if isinstance(current, mi.Metadata):
            extra.update(current.extra or {})
            pending.insert(0, current.type)
        elif isinstance(current, mi.UnionType):
            pending[:0] = list(current.types)
        elif not isinstance(current, mi.NoneType):
            members.append(current)
    return members, extra


def _struct(field_type: mi.Type) -> mi.StructType | None:
    members, _ = _members(field_type)
    return next((m for m in members if isinstance(m, mi.StructType)), None)


def _items(field_type: mi.Type) -> mi.Type | None:
    """The type of a list field's items (``[[bots]]``'s tables, a list of strings)."""
    members, _ = _members(field_type)
    return next((m.item_type for m in members if isinstance(m, mi.ListType)), None)


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
