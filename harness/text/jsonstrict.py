"""A strict JSON reader: what a JSON Schema cannot see.

The standard parser accepts duplicate keys (last wins), `NaN`/`Infinity`, and
hands `4.0` over as a float that JSON Schema then calls an integer. For a
judge.json those are all ways to smuggle an ambiguous score past validation,
so this reader reports each one with its JSON pointer.

Two more things no reader should be handed: an integer of more than `MAX_INT_DIGITS`
digits (Python refuses to convert one, with a ValueError that would end the run) and a
lone surrogate escape such as `\\ud800` (not a Unicode character: it cannot be written as
UTF-8, and a strict consumer rejects the document). Both are reported with their pointer;
a judge.json holding either is invalid.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64
# Python's own limit for int(str) (sys.get_int_max_str_digits' default); no score needs more.
MAX_INT_DIGITS = 4300
# A surrogate code point as an escape (`\\ud83d`): the walk then looks for a lone one.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _has_surrogate(text: str) -> bool:
    """Whether `text` holds a surrogate code point, raw or as an escape.

    The same answer as searching `[\\ud800-\\udfff]|\\\\u[dD][89a-fA-F]`, at a fraction of
    its cost: a regex scan of a finding (8 KB of mostly non-ASCII text) was most of
    `loads_strict`'s own time. Only a text with `\\u` can hold the escape, and only a
    surrogate code point stops a str from encoding as UTF-8 (ASCII holds none).
    """
    if "\\u" in text and _ESCAPED_SURROGATE.search(text):
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class _HugeInt(float):
    """An integer with too many digits to convert, kept as its length for the report."""

    text: str

    def __new__(cls, text: str) -> _HugeInt:
        obj = super().__new__(cls, "nan")
        obj.text = f"an integer of {len(text.lstrip('-')):,} digits"
        return obj


def _int_hook(text: str) -> int | _HugeInt:
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        return _HugeInt(text)
    return int(text)


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone (unpaired) surrogate in `text`, or None."""
    for i, ch in enumerate(text):
        if "\ud800" <= ch <= "\udbff":
            if i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff":
                continue
            return i
        if "\udc00" <= ch <= "\udfff" and not (i and "\ud800" <= text[i - 1] <= "\udbff"):
            return i
    return None


@dataclass(frozen=True, slots=True)
class Issue:
    """One validation error: where, what was expected, what was found."""

    pointer: str
    expected: str
    found: str
    # "value" issues make a schema complaint about the same spot redundant.
    rule: str = "schema"

    def message(self) -> str:
        where = self.pointer or "(top level)"
        return f"at {where}: expected {self.expected}; found {self.found}"

    def as_dict(self) -> dict[str, str]:
        return {
            "pointer": self.pointer,
            "expected": self.expected,
            "found": self.found,
            "message": self.message(),
        }


class LiteralFloat(float):
    """A number written with a fraction or exponent; keeps its source text."""

    text: str

    def __new__(cls, text: str) -> LiteralFloat:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


class _BadConstant(float):
    """NaN / Infinity as written, kept so the walk can report where."""

    text: str

    def __new__(cls, text: str) -> _BadConstant:
        obj = super().__new__(cls, "nan")
        obj.text = text
        return obj


def pointer_join(pointer: str, token: str | int) -> str:
    """Append one reference token to a JSON pointer (RFC 6901 escaping)."""
    text = str(token).replace("~", "~0").replace("/", "~1")
    return f"{pointer}/{text}"


def describe(value: Any, limit: int = 60) -> str:
    """A short, JSON-looking rendering of a found value for error messages."""
    if isinstance(value, _BadConstant):
        return f"{value.text} (not valid JSON)"
    if isinstance(value, _HugeInt):
        return value.text
    if isinstance(value, str) and lone_surrogate(value) is not None:
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, LiteralFloat):
        text = value.text
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    if isinstance(value, dict | list):
        if len(text) > limit:
            kind = "an object" if isinstance(value, dict) else "an array"
            return f"{kind} of {len(value)} item(s)"
        if isinstance(value, list):
            return "an empty array []" if not value else text
        return "an empty object {}" if not value else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(slots=True)
class StrictResult:
    value: Any
    issues: list[Issue]
    parsed: bool


def loads_strict(
    text: str, *, max_depth: int | None = MAX_DEPTH, forbid_fractions: bool = True
) -> StrictResult:
    """Parse `text`, reporting every strictness violation instead of hiding it.

    `forbid_fractions` reports numbers written with a fraction or exponent
    (judge.json has no place for them); pipeline inputs may carry them.
    `max_depth=None` skips the nesting pre-scan (large inputs): the parser's
    own recursion limit is then the guard.
    `parsed` is False when no value could be produced at all (syntax error,
    too deep); `issues` then holds one entry explaining where parsing stopped.
    """
    duplicates: dict[int, list[str]] = {}
    # An object that lost a duplicate key may itself be dropped (it was the first
    # copy of a duplicate key one level up); holding it keeps its id from being
    # reused by a later object, which would then be blamed for its duplicates.
    holders: list[dict[str, Any]] = []
    suspicious = [0]

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            holders.append(result)
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    duplicates.setdefault(id(result), []).append(key)
                seen.add(key)
        return result

    def float_hook(text: str) -> LiteralFloat:
        if forbid_fractions:
            suspicious[0] += 1
        return LiteralFloat(text)

    def constant_hook(text: str) -> _BadConstant:
        suspicious[0] += 1
        return _BadConstant(text)

    def int_hook(text: str) -> int | _HugeInt:
        number = _int_hook(text)
        if isinstance(number, _HugeInt):
            suspicious[0] += 1
        return number

    if not text.strip():
        found = "empty text" if not text else "only whitespace"
        return StrictResult(
            None, [Issue("", "a JSON document", f"{found} (no JSON value at all)")], False
        )
    if text.startswith("\ufeff"):
        found = "a byte-order mark (U+FEFF) before the JSON value; save it as UTF-8 without one"
        return StrictResult(None, [Issue("", "JSON text starting with a value", found)], False)
    if max_depth is not None:
        depth = _max_nesting(text)
        if depth > max_depth:
            expected = f"JSON nested at most {max_depth} levels deep"
            issue = Issue("", expected, f"nesting {depth} levels deep")
            return StrictResult(None, [issue], False)
    try:
        value = json.loads(
            text,
            object_pairs_hook=pairs_hook,
            parse_float=float_hook,
            parse_constant=constant_hook,
            parse_int=int_hook,
        )
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            found = f"more data after the JSON value at line {exc.lineno} column {exc.colno}"
            return StrictResult(None, [Issue("", "exactly one JSON value", found)], False)
        found = f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        return StrictResult(None, [Issue("", "a JSON document", found)], False)
    except RecursionError:
        issue = Issue("", "JSON nested less deeply", "nesting too deep for the parser")
        return StrictResult(None, [issue], False)

    issues: list[Issue] = []
    # The walk only locates problems; skip it when the hooks saw none.
    if _has_surrogate(text):
        suspicious[0] += 1
    if duplicates or suspicious[0]:
        _walk(value, "", duplicates, issues, forbid_fractions)
    return StrictResult(value, issues, True)


def _max_nesting(text: str) -> int:
    """Deepest bracket nesting outside strings; cheap guard before parsing."""
    if "[" not in text and "{" not in text:
        return 0
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _walk(
    value: Any,
    pointer: str,
    duplicates: dict[int, list[str]],
    issues: list[Issue],
    forbid_fractions: bool,
) -> None:
    # Iterative so that a hostile document cannot exhaust the stack here either.
    stack: list[tuple[Any, str]] = [(value, pointer)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            for key in node:
                if lone_surrogate(key) is not None:
                    shown = key.encode("utf-8", "backslashreplace").decode("utf-8")
                    issues.append(_surrogate_issue(pointer_join(where, shown)))
            for key in duplicates.get(id(node), ()):
                issues.append(
                    Issue(
                        pointer_join(where, key),
                        f"the key {json.dumps(key)} at most once in this object",
                        "a duplicate key (JSON readers disagree on which copy wins)",
                        "duplicate_key",
                    )
                )
            for key in reversed(list(node)):
                stack.append((node[key], pointer_join(where, key)))
        elif isinstance(node, list):
            for index in range(len(node) - 1, -1, -1):
                stack.append((node[index], pointer_join(where, index)))
        elif isinstance(node, str):
            if lone_surrogate(node) is not None:
                issues.append(_surrogate_issue(where))
        elif isinstance(node, _HugeInt):
            expected = f"a number of at most {MAX_INT_DIGITS:,} digits"
            issues.append(Issue(where, expected, node.text, "value"))
        elif isinstance(node, _BadConstant):
            issues.append(
                Issue(where, "a finite JSON number", f"{node.text} (not valid JSON)", "value")
            )
        elif forbid_fractions and isinstance(node, LiteralFloat):
            issues.append(
                Issue(
                    where,
                    "a whole number written without a fraction or exponent (e.g. 4)",
                    f"{node.text}",
                    "value",
                )
            )


def _surrogate_issue(where: str) -> Issue:
    return Issue(
        where,
        "text of Unicode characters",
        "a lone surrogate escape (such as \\ud800), which is no character; remove it",
        "value",
    )


def _no_surrogate(text: str) -> str:
    # A proper pair survives the round trip; a lone surrogate becomes U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def replace_lone_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD, in
    place where it can be; for pipeline inputs, whose problems are reported, not refused.
    Iterative: no document is too deep for it."""
    if isinstance(value, str):
        return _no_surrogate(value)
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            items = [(_no_surrogate(k) if isinstance(k, str) else k, v) for k, v in node.items()]
            node.clear()
            for key, child in items:
                node[key] = _no_surrogate(child) if isinstance(child, str) else child
                if isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(node, list):
            for index, child in enumerate(node):
                if isinstance(child, str):
                    node[index] = _no_surrogate(child)
                elif isinstance(child, dict | list):
                    stack.append(child)
    return value
