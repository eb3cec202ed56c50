"""Values of a staff member's YAML or JSON file (question sets, vocabularies), checked
before they reach the database."""

from __future__ import annotations


def shown(value: object) -> str:
    """A value as a message shows it: a list or a mapping by its kind only (a YAML alias
    may stand for millions of strings)."""
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def file_text(value: object, *, where: str, name: str, error: type[Exception]) -> str:
    """A text of the file, stripped ("" when not given): a string, or a number as written.
    Raises ``error`` (its message starting with ``where``) for a list or a mapping (a YAML
    alias may stand for millions of strings), a true or false (YAML reads an unquoted
    yes or no so), or a NUL character (PostgreSQL stores none)."""
    prefix = f"{where}: " if where else ""
    if value is None:
        return ""
    if isinstance(value, bool):
        raise error(f"{prefix}{name} is true or false in YAML (write it in quotes)")
    if not isinstance(value, str | int | float):
        raise error(f"{prefix}{name} must be a text, not {shown(value)}")
    text = str(value).strip()
    if "\x00" in text:
        raise error(f"{prefix}{name} holds a NUL character, which a text cannot hold")
    return text
