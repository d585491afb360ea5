"""Which elements CSS hides, read with a real CSS tokenizer (tinycss2).

A page can hide text from every reader's eyes and still hand it to a quote matcher:
``display:/**/none``, an escaped property name (``\\64 isplay:none``), ``visibility:
collapse``, a ``<style>`` rule on a class. A regular expression over the ``style``
attribute misses all of these; tinycss2 tokenizes as a browser does (comments dropped,
escapes decoded, ``!important`` seen), so the properties below are read as a browser
reads them.

What hides:

* ``display: none`` and ``content-visibility: hidden``: the element and everything in it;
* ``visibility: hidden`` or ``collapse``: inherited, so a descendant that says
  ``visibility: visible`` is shown again (as in a browser).

Where from: the element's ``style`` attribute, and the page's ``<style>`` sheets (in the
head or the body; a sheet whose ``media`` leaves out the screen is not applied). The
cascade is the usual one for these properties: ``!important`` first, then the inline
style, then the selector's specificity, then the later rule.

Selectors supported: simple and compound ones, made of a tag, ``*``, ``.class`` and
``#id`` (``div.note#x``), in a comma-separated list. **Not supported** (such a rule is
not applied, so its text stays in): combinators (``div p``, ``>``, ``+``, ``~``),
attribute selectors, pseudo-classes and pseudo-elements, rules inside ``@media``,
``@supports`` or ``@layer``, ``@import``-ed and ``<link>``-ed sheets. At most
:data:`MAX_RULES` rules and :data:`MAX_SHEET_CHARS` characters of sheets are read; a cut
is said in the document's cuts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_RULES", "MAX_SHEET_CHARS", "Sheet", "Style", "declarations"]

MAX_RULES = 20_000
MAX_SHEET_CHARS = 2 * 1024 * 1024

# property -> values that matter (anything else resets the property to "shown")
_DISPLAY = "display"
_CONTENT_VISIBILITY = "content-visibility"
_VISIBILITY = "visibility"
_PROPERTIES = frozenset({_DISPLAY, _CONTENT_VISIBILITY, _VISIBILITY})


@dataclass(frozen=True, slots=True)
class Style:
    """What an element's own styles say: ``gone`` (display none), and visibility
    (``False`` hidden, ``True`` visible again, None: inherited)."""

    gone: bool = False
    visible: bool | None = None


def _value(tokens: Iterable[Any]) -> str | None:
    """The first identifier of a declaration's value, lower-cased (None: not one)."""
    for token in tokens:
        kind = getattr(token, "type", "")
        if kind in ("whitespace", "comment"):
            continue
        if kind == "ident":
            return str(token.lower_value)
        return None
    return None


def declarations(text: str | list[Any]) -> dict[str, tuple[str | None, bool]]:
    """The hiding properties a declaration list sets: name -> (value, important); the
    last one of each name wins, unless an earlier one was ``!important``."""
    import tinycss2  # type: ignore[import-untyped]

    out: dict[str, tuple[str | None, bool]] = {}
    for item in tinycss2.parse_blocks_contents(text, skip_comments=True, skip_whitespace=True):
        if getattr(item, "type", "") != "declaration":
            continue
        name = str(item.lower_name)
        if name not in _PROPERTIES:
            continue
        value = (_value(item.value), bool(item.important))
        if name in out and out[name][1] and not value[1]:
            continue
        out[name] = value
    return out


@dataclass(frozen=True, slots=True)
class _Selector:
    tag: str | None  # None: any
    ids: tuple[str, ...]
    classes: tuple[str, ...]

    @property
    def specificity(self) -> tuple[int, int, int]:
        return (len(self.ids), len(self.classes), 0 if self.tag is None else 1)

    def matches(self, tag: str, element_id: str | None, classes: frozenset[str]) -> bool:
        if self.tag is not None and self.tag != tag:
            return False
        if any(i != element_id for i in self.ids):
            return False
        return all(c in classes for c in self.classes)


def _selector(tokens: list[Any]) -> _Selector | None:
    """A compound selector of tag, ``*``, ``.class`` and ``#id``; None when unsupported."""
    while tokens and getattr(tokens[0], "type", "") in ("whitespace", "comment"):
        tokens = tokens[1:]
    while tokens and getattr(tokens[-1], "type", "") in ("whitespace", "comment"):
        tokens = tokens[:-1]
    if not tokens:
        return None
    tag: str | None = None
    ids: list[str] = []
    classes: list[str] = []
    i = 0
    first = tokens[0]
    if getattr(first, "type", "") == "ident":
        tag = str(first.lower_value)
        i = 1
    elif getattr(first, "type", "") == "literal" and first.value == "*":
        i = 1
    while i < len(tokens):
        token = tokens[i]
        kind = getattr(token, "type", "")
        if kind == "hash" and token.is_identifier:
            ids.append(str(token.value))
            i += 1
        elif (
            kind == "literal"
            and token.value == "."
            and i + 1 < len(tokens)
            and getattr(tokens[i + 1], "type", "") == "ident"
        ):
            classes.append(str(tokens[i + 1].value))
            i += 2
        else:
            return None  # a combinator, an attribute, a pseudo-class: not supported
    return _Selector(tag, tuple(ids), tuple(classes))


def _selectors(prelude: list[Any]) -> list[_Selector] | None:
    groups: list[list[Any]] = [[]]
    for token in prelude:
        if getattr(token, "type", "") == "literal" and token.value == ",":
            groups.append([])
        else:
            groups[-1].append(token)
    out = []
    for group in groups:
        chosen = _selector(group)
        if chosen is not None:
            out.append(chosen)
    return out


@dataclass(slots=True)
class _Rule:
    selector: _Selector
    order: int
    values: dict[str, tuple[str | None, bool]]


def _screen(media: str | None) -> bool:
    """Does a ``<style media=...>`` apply on a screen (unknown queries: yes)."""
    if not media or not media.strip():
        return True
    words = media.lower().replace(",", " ").split()
    return not (words and all(w in ("print", "speech", "aural", "braille") for w in words))


@dataclass(slots=True)
class Sheet:
    """The page's ``<style>`` rules that can hide, indexed for matching."""

    by_id: dict[str, list[_Rule]] = field(default_factory=dict)
    by_class: dict[str, list[_Rule]] = field(default_factory=dict)
    by_tag: dict[str, list[_Rule]] = field(default_factory=dict)
    anywhere: list[_Rule] = field(default_factory=list)
    rules: int = 0
    cuts: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, sheets: Iterable[tuple[str, str | None]]) -> Sheet:
        """The rules of ``sheets`` ((text, media attribute) in document order)."""
        import tinycss2

        sheet = cls()
        chars = 0
        for text, media in sheets:
            if not _screen(media):
                continue
            if chars + len(text) > MAX_SHEET_CHARS:
                text = text[: max(0, MAX_SHEET_CHARS - chars)]
                sheet.cuts.append(
                    f"style sheets cap: only the first {MAX_SHEET_CHARS:,} characters of the "
                    "page's <style> sheets were read for hidden text"
                )
            chars += len(text)
            for rule in tinycss2.parse_stylesheet(text, skip_comments=True, skip_whitespace=True):
                if getattr(rule, "type", "") != "qualified-rule":
                    continue  # @media, @supports, @import ...: not applied (see above)
                if sheet.rules >= MAX_RULES:
                    sheet.cuts.append(
                        f"style rules cap: only the first {MAX_RULES:,} rules of the page's "
                        "<style> sheets were read for hidden text"
                    )
                    return sheet
                values = declarations(rule.content or [])
                if not values:
                    continue
                for selector in _selectors(rule.prelude) or []:
                    sheet._add(_Rule(selector, sheet.rules, values))
                sheet.rules += 1
            if chars >= MAX_SHEET_CHARS:
                break
        return sheet

    def _add(self, rule: _Rule) -> None:
        s = rule.selector
        if s.ids:
            self.by_id.setdefault(s.ids[0], []).append(rule)
        elif s.classes:
            self.by_class.setdefault(s.classes[0], []).append(rule)
        elif s.tag is not None:
            self.by_tag.setdefault(s.tag, []).append(rule)
        else:
            self.anywhere.append(rule)

    @property
    def empty(self) -> bool:
        return not (self.by_id or self.by_class or self.by_tag or self.anywhere)

    def style(self, tag: str, attrs: dict[str, str | None]) -> Style:
        """What the sheet and the ``style`` attribute say about this element."""
        # property -> (important, inline, specificity, order), value
        best: dict[str, tuple[tuple[bool, bool, tuple[int, int, int], int], str | None]] = {}
        if not self.empty:
            element_id = attrs.get("id")
            classes = frozenset((attrs.get("class") or "").split())
            candidates: list[_Rule] = list(self.anywhere)
            candidates += self.by_tag.get(tag, [])
            if element_id:
                candidates += self.by_id.get(element_id, [])
            for name in classes:
                candidates += self.by_class.get(name, [])
            for rule in candidates:
                if not rule.selector.matches(tag, element_id, classes):
                    continue
                for prop, (value, important) in rule.values.items():
                    rank = (important, False, rule.selector.specificity, rule.order)
                    if prop not in best or rank > best[prop][0]:
                        best[prop] = (rank, value)
        inline = attrs.get("style")
        if inline:
            for prop, (value, important) in declarations(inline).items():
                rank = (important, True, (0, 0, 0), 0)
                if prop not in best or rank > best[prop][0]:
                    best[prop] = (rank, value)
        if not best:
            return _SHOWN
        gone = (_DISPLAY in best and best[_DISPLAY][1] == "none") or (
            _CONTENT_VISIBILITY in best and best[_CONTENT_VISIBILITY][1] == "hidden"
        )
        visible: bool | None = None
        if _VISIBILITY in best:
            value = best[_VISIBILITY][1]
            if value in ("hidden", "collapse"):
                visible = False
            elif value == "visible":
                visible = True
        return Style(gone, visible)


_SHOWN = Style()
