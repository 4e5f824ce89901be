"""Safe YAML loading that remembers line numbers, and pydantic errors turned
into located problems (file, line, field, what was found, how to fix it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import BenchledgerError, Problem

Lines = dict[tuple[str | int, ...], int]
M = TypeVar("M", bound=BaseModel)


MAX_DEPTH = 32  # nesting deeper than this is refused: no real manifest needs it
MAX_NODES = 100_000  # values in one file, aliases expanded: an alias bomb stops here (or at
# one value per two characters of a larger file: no alias-free document needs more)
MAX_SCALAR = 1_048_576  # characters in one value: a recorded command's arguments (up to 131,071 bytes each) fit
DATE_RANGE = (1970, 2105)  # years whose timestamps fit 32-bit fields (gzip, sitemaps)


class _Refused(Exception):
    """A YAML construct this reader does not accept, located."""

    def __init__(self, node: yaml.Node, message: str) -> None:
        self.line = node.start_mark.line + 1
        self.message = message


def _walk(
    node: yaml.Node, path: tuple[str | int, ...], lines: Lines, dups: list[Problem], rel: str, count: list[int]
) -> None:
    """Record each key's line and every duplicate key; refuse expansion beyond count[1] values
    (the composer shares one node for every *alias of an &anchor, so the walk counts each
    use), nesting beyond MAX_DEPTH and huge values."""
    count[0] += 1
    if count[0] > count[1]:
        raise _Refused(node, f"expands to more than {count[1]:,} values (YAML aliases?); write the values out plainly")
    if len(path) > MAX_DEPTH:
        raise _Refused(node, f"nested more than {MAX_DEPTH} levels deep; flatten the structure")
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode) and len(node.value) > MAX_SCALAR:
        raise _Refused(node, f"a value of {len(node.value):,} characters; keep values to at most {MAX_SCALAR:,}")
    if isinstance(node, yaml.MappingNode):
        names: set[str] = set()
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise _Refused(key, "a key must be plain text, not a list or a mapping")
            name = str(key.value)
            if name in names:
                dups.append(
                    Problem(
                        file=rel,
                        line=key.start_mark.line + 1,
                        field=".".join(map(str, (*path, name))),
                        message="key appears twice; keep one (YAML would silently use the last)",
                    )
                )
            names.add(name)
            lines[(*path, name)] = key.start_mark.line + 1
            _walk(value, (*path, name), lines, dups, rel, count)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), lines, dups, rel, count)


def _unreadable(node: yaml.Node) -> int | None:
    """The line of the first scalar a fresh safe loader cannot construct."""
    todo = [node]
    while todo:
        current = todo.pop(0)
        if isinstance(current, yaml.ScalarNode):
            try:
                yaml.SafeLoader("").construct_object(current, deep=True)
            except (ValueError, OverflowError, yaml.YAMLError):
                return int(current.start_mark.line) + 1
        elif isinstance(current, yaml.MappingNode):
            todo.extend(n for pair in current.value for n in pair)
        elif isinstance(current, yaml.SequenceNode):
            todo.extend(current.value)
    return None


def parse_yaml(text: str, rel: str) -> tuple[Any, Lines]:
    """Parse YAML with the safe loader only; raise located problems on bad syntax, tags,
    aliases, deep nesting, huge values, and values no YAML type can hold (a 30 February)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)  # libyaml when the wheel has it
    lines: Lines = {}
    dups: list[Problem] = []
    node: yaml.Node | None = None
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        _walk(node, (), lines, dups, rel, [0, max(MAX_NODES, len(text) // 2)])
        data = loader.construct_document(node)
    except _Refused as err:
        raise BenchledgerError(Problem(file=rel, line=err.line, message=err.message)) from None
    except yaml.constructor.ConstructorError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else None
        raise BenchledgerError(
            Problem(
                file=rel,
                line=line,
                message=f"{err.problem}; only plain YAML is read (no !!python or other tags that build "
                "objects): remove the tag",
            )
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(err, "problem", None) or str(err)
        context, cmark = getattr(err, "context", None), getattr(err, "context_mark", None)
        where = f" ({context} started on line {cmark.line + 1})" if context and cmark else ""
        raise BenchledgerError(
            Problem(file=rel, line=line, message=f"YAML syntax error: {problem}{where}; fix the YAML there")
        ) from None
    except (ValueError, OverflowError) as err:  # int("9" * 5000), date(2026, 2, 30), ...
        line = _unreadable(node) if node is not None else None
        raise BenchledgerError(
            Problem(file=rel, line=line, message=f"a value cannot be read ({err}); write a plain number, date or text")
        ) from None
    finally:
        loader.dispose()
    if dups:
        raise BenchledgerError(dups)
    return data, lines


def line_for(loc: tuple[str | int, ...], lines: Mapping[tuple[str | int, ...], int]) -> int | None:
    """The line of the deepest YAML node on `loc` that has one."""
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines:
            return lines[loc[:cut]]
    return None


def _fix(err: dict[str, Any]) -> str:
    kind = err["type"]
    field = str(err["loc"][-1]) if err["loc"] else "field"
    if kind == "missing":
        return f"missing; add `{field}:`"
    found = err.get("input")
    shown = repr(found) if not isinstance(found, dict | list) else type(found).__name__
    if kind == "extra_forbidden":
        return f"unknown key {field!r}; remove it or correct its spelling"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if kind == "value_error" and isinstance(found, dict | list):
        return msg  # a rule over a whole mapping (a claim's two sides): "(found dict)" says nothing
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"{msg} (found {shown})"


def validation_problems(
    err: ValidationError, rel: str, lines: Lines, prefix: tuple[str | int, ...] = ()
) -> list[Problem]:
    """One problem per pydantic error, located by the YAML line map."""
    out = []
    for e in err.errors():
        loc = prefix + tuple(p for p in e["loc"] if p != "__root__")
        field = ".".join(str(p) for p in loc) or None
        out.append(Problem(file=rel, line=line_for(loc, lines), field=field, message=_fix(dict(e))))
    return out


def check_schema(data: Any, expected: str, rel: str, lines: Lines) -> None:
    """Refuse a file without `schema:` or with a version this benchledger does not read."""
    if not isinstance(data, dict):
        raise BenchledgerError(Problem(file=rel, line=1, message="must be a YAML mapping of keys to values"))
    found = data.get("schema")
    if found is None:
        raise BenchledgerError(Problem(file=rel, line=1, field="schema", message=f"missing; add `schema: {expected}`"))
    if found != expected:
        raise BenchledgerError(
            Problem(
                file=rel,
                line=lines.get(("schema",)),
                field="schema",
                message=f"unknown schema version {found!r}; this benchledger reads {expected!r} "
                "(fix the value, or upgrade benchledger if the file is newer)",
            )
        )


def validate(model: type[M], data: Any, rel: str, lines: Lines, prefix: tuple[str | int, ...] = ()) -> M:
    """Validate `data` against `model`, raising located problems."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise BenchledgerError(validation_problems(err, rel, lines, prefix)) from None


def load_model(model: type[M], text: str, rel: str, schema: str | None) -> tuple[M, Lines]:
    """Parse, check the schema version, and validate one YAML file."""
    data, lines = parse_yaml(text, rel)
    if schema is not None:
        check_schema(data, schema, rel, lines)
    elif not isinstance(data, dict):
        raise BenchledgerError(Problem(file=rel, line=1, message="must be a YAML mapping of keys to values"))
    return validate(model, data, rel, lines), lines
