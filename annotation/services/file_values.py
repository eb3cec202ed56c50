"""Values of a staff member's YAML or JSON file (question sets, vocabularies), checked
before they reach the database."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Hashable
from pathlib import Path

import yaml

from annotation.designs.base import refuse_nul


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
    refuse_nul(text, what=f"{prefix}{name}", error=error)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in JSON or YAML)
        raise error(f"{prefix}{name} holds a character that is not Unicode text") from None
    return text


FILE_LIMIT = 1_000_000  # bytes; VGA-Bench's question set is about 30 kB


def read_file_text(path: Path, *, error: type[Exception]) -> str:
    """The file's text (UTF-8, a byte-order mark dropped); ``error`` names the file by
    its name only (an upload's lies in a server folder no one needs to see). A file over
    FILE_LIMIT is refused before it is read (YAML's parser took 24 s and 835 MB for
    10 MB)."""
    try:
        if path.stat().st_size > FILE_LIMIT:
            raise error(f"{path.name}: larger than {FILE_LIMIT // 1000} kB")
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        where = f"at byte {exc.start + 1}: save it as UTF-8"
        raise error(f"{path.name} is not UTF-8 text ({where})") from None
    except OSError as exc:
        raise error(f"cannot read {path.name}: {exc.strerror or exc}") from None


def is_json(path: Path) -> bool:
    """Whether the file is read as JSON (``.json``, ``.JSON``), else as YAML."""
    return path.suffix.lower() == ".json"


def parse_file(text: str, *, is_json: bool) -> object:
    """The file's ``text`` parsed as JSON or YAML, a key given twice in one mapping
    refused (both parsers would keep the last value silently): ValueError (JSON) or
    yaml.YAMLError (YAML, with the line) naming the key."""
    if is_json:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict:
    twice = [key for key, count in Counter(key for key, _ in pairs).items() if count > 1]
    if twice:
        raise ValueError(f"the key {twice[0]!r} is given twice in one mapping")
    return dict(pairs)


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, Hashable):
                    continue  # the safe loader refuses it, with its own message
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping",
                        node.start_mark,
                        f"the key {key!r} is given twice",
                        key_node.start_mark,
                    )
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


# YAML 1.1's numbers, as PyYAML reads them, rewrote what was written: a key 010 became 8
# (octal), 0x1f 31, 1:30 90 (base 60), and 1e3 was text (no dot). Numbers are read as
# JSON (and YAML 1.2) write them: a whole number without a leading zero, or a decimal
# with an optional exponent; anything else stays the text it is.
_WHOLE = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")
_DECIMAL = re.compile(
    r"^[-+]?(\.[0-9]+|(0|[1-9][0-9]*)(\.[0-9]*)?)([eE][-+]?[0-9]+)?$"
    r"|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$"
)
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _NUMBER_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UniqueKeyLoader.add_implicit_resolver(_NUMBER_TAGS[0], _WHOLE, list("-+0123456789"))
_UniqueKeyLoader.add_implicit_resolver(_NUMBER_TAGS[1], _DECIMAL, list("-+0123456789."))
_UniqueKeyLoader.add_constructor(
    _NUMBER_TAGS[0], lambda loader, node: int(loader.construct_scalar(node))
)


def shipped_or_path(name: str, *, folder: Path, error: type[Exception]) -> Path:
    """A template shipped in ``folder`` by its name (``vga-bench``: ``vga-bench.yaml``),
    or the path as given; neither: ``error`` naming the shipped templates, so that a typo
    in a template's name does not read as a missing file."""
    shipped = folder / f"{name}.yaml"
    if shipped.is_file():
        return shipped
    if not Path(name).exists():
        templates = ", ".join(sorted(path.stem for path in folder.glob("*.yaml")))
        raise error(f"no file {name!r}, and no shipped template of that name ({templates})")
    return Path(name)
