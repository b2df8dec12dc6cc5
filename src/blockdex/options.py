"""Every user-facing extraction option, declared once and validated once.

:class:`ExtractOptions` is what every entry point turns its input into: the command line
(:meth:`ExtractOptions.from_args`, with the arguments :func:`add_option_arguments` declares), a
JSON request of the HTTP service or an MCP tool call (:meth:`ExtractOptions.from_payload`) and a
Python call (:meth:`ExtractOptions.from_kwargs`). Each option is one field below with its help
text; the argparse options, the OpenAPI properties (:func:`json_schema_properties`) and the MCP
tool's parameters are made from these fields, so a new option is one field plus its use in the
pipeline (:func:`blockdex.extract.run`).

An option's *spelling* differs from door to door: ``--no-comments`` on the command line,
``'comments': false`` in a JSON request, ``comments=False`` in Python. Errors name an option the
way its door spells it.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from blockdex.errors import BlockdexError, UnsupportedFormat

FORMATS = ("markdown", "text", "html", "json")
"""The output formats (:func:`blockdex.render.render`)."""
FAVOR_CHOICES = ("balanced", "precision", "recall")
"""The main-content model's trade-offs (:data:`blockdex.predict.content.FAVOR_SHIFTS`)."""

Door = Literal["cli", "payload", "kwargs"]
"""How a caller spells options: command-line flags, JSON keys, Python keywords."""


class InvalidOption(BlockdexError):
    """An option value that cannot be used, or options that do not go together."""

    kind = "invalid_request"


def _option(
    default: Any,
    help: str,
    *,
    flags: tuple[str, ...] = (),
    choices: tuple[str, ...] | None = None,
    metavar: str | None = None,
    main_content: bool = False,
    alias: str | None = None,
    minimum: int | None = None,
) -> Any:
    """One option's declaration: its default, its help text and how the doors present it.

    ``flags`` are its command-line flags (a bool whose default is True gets one ``--no-…`` flag
    that turns it off); ``main_content`` marks an option of the main-content model only (refused
    with a query or another method); ``alias`` is its older Python keyword; ``minimum`` the
    least value a number may have."""
    meta = {
        "help": help,
        "flags": flags,
        "choices": choices,
        "metavar": metavar,
        "main_content": main_content,
        "alias": alias,
        "minimum": minimum,
    }
    return field(default=default, metadata=meta)


@dataclass(frozen=True, slots=True)
class ExtractOptions:
    """What one extraction request asks for, whichever door it came through."""

    method: str | None = _option(
        None,
        "how blocks are chosen: a predictor or a classic method ('blockdex methods' lists them;"
        " default: the main-content model, or with a query the relevance model)",
        flags=("-p", "--predictor", "--method"),
        metavar="NAME",
        alias="predictor",
    )
    query: str | None = _option(
        None,
        "keep only the blocks relevant to this question or topic instead of the main content",
        flags=("-q", "--query"),
    )
    format: str = _option(
        "markdown",
        "output format: markdown, text, html or json (default: markdown)",
        flags=("-f", "--format"),
        choices=FORMATS,
        alias="output",
    )
    favor: str = _option(
        "balanced",
        "precision: keep only the blocks the main-content model is surest of (less boilerplate,"
        " some content lost); recall: keep more (less content lost, more boilerplate); default:"
        " balanced (the best F1); main content only, not with a query",
        flags=("--favor",),
        choices=FAVOR_CHOICES,
        main_content=True,
    )
    comments: bool = _option(
        True,
        "off: drop reader comments even where the main-content model keeps them (a thread"
        " longer than its post); a page that is all discussion (forum, Q&A) keeps it, with a"
        " warning; main content only, not with a query",
        flags=("--no-comments",),
        main_content=True,
    )
    repeats: bool = _option(
        False,
        "keep a block whose text (three words or more) repeats one kept before it; by default"
        " it is dropped: a carousel's copy of a slide, a section written again for phones, a"
        " post quoted in a reply (table rows and code blocks always stay); main content only,"
        " not with a query",
        flags=("--keep-repeats",),
        main_content=True,
    )
    links: bool = _option(
        False,
        "keep links: [text](absolute URL), resolved against <base href> and the page's URL;"
        " javascript:, #fragment and empty links stay plain text",
        flags=("--links",),
    )
    images: bool = _option(
        False,
        "write kept images: ![caption](absolute URL), the address lazy-loading attributes and"
        " srcset name when src is a placeholder; without it Markdown leaves images out and"
        " keeps figure captions",
        flags=("--images",),
    )
    never_empty: bool = _option(
        True,
        "off: return nothing when no block looks like main content, as benchmarks that mark"
        " pages 'no main content' expect (on, the default: keep the likeliest blocks then, with"
        " a warning); main content only, not with a query",
        flags=("--allow-empty",),
        main_content=True,
    )
    max_tokens: int | None = _option(
        None,
        "cap the output at N tokens of block text (words and punctuation marks; a character of"
        " Chinese or Japanese is one): blocks are kept in page order while they fit and the"
        " rest is cut, with a warning; default: no cap",
        flags=("--max-tokens",),
        metavar="N",
        minimum=1,
    )

    def validate(self, door: Door = "kwargs") -> ExtractOptions:
        """Refuse values that cannot be used and options that do not go together, naming them
        as ``door`` spells them; return the options themselves."""
        if self.format not in FORMATS:
            what = {"cli": "--format", "payload": "format", "kwargs": "output format"}[door]
            raise UnsupportedFormat(
                f"unknown {what} {self.format!r}; choose one of: {', '.join(FORMATS)}"
            )
        if self.favor not in FAVOR_CHOICES:
            raise InvalidOption(
                f"{spell('favor', door)} must be one of {', '.join(FAVOR_CHOICES)},"
                f" not {self.favor!r}"
            )
        for f in dataclasses.fields(self):
            least, value = f.metadata["minimum"], getattr(self, f.name)
            if least is not None and value is not None and value < least:
                raise InvalidOption(f"{spell(f.name, door)} must be at least {least}, not {value}")
        if self.method is not None and not self.method.strip():
            raise InvalidOption(f"{spell('method', door)} is empty: name a method or leave it out")
        for f in dataclasses.fields(self):
            if not f.metadata["main_content"] or getattr(self, f.name) == f.default:
                continue
            if self.method not in (None, "content") or self.has_query:
                query = "--query" if door == "cli" else "query"
                method = {"cli": "--predictor", "payload": "method", "kwargs": "predictor"}[door]
                raise InvalidOption(
                    f"{spell(f.name, door, given=True)} applies only to the main-content model"
                    f" (no {query}, no other {method})"
                )
        return self

    @property
    def has_query(self) -> bool:
        return bool(self.query and self.query.strip())

    def predictor_options(self) -> dict[str, Any]:
        """Keyword options of the main-content predictor that differ from its defaults (the
        other predictors take none)."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.metadata["main_content"] and getattr(self, f.name) != f.default
        }

    def replace(self, **changes: Any) -> ExtractOptions:
        return dataclasses.replace(self, **changes)

    # -- the doors

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ExtractOptions:
        """Options from Python keywords (``favor="precision"``; ``predictor=`` and ``output=``
        are read as ``method`` and ``format``), validated."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            for name in (f.name, f.metadata["alias"]):
                if name is not None and name in kwargs:
                    values[f.name] = kwargs.pop(name)
        if kwargs:
            raise TypeError(f"unknown option(s): {', '.join(sorted(kwargs))}")
        return cls(**values).validate("kwargs")

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], *, strings: bool = False) -> ExtractOptions:
        """Options from a JSON object (other keys are left for the caller), validated; each
        value must have its option's JSON type. ``strings=True`` reads them from a query
        string (``?comments=0&max_tokens=500``)."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            value = payload.get(f.name)
            if value is None:
                continue
            kind = _kind(f)
            if strings and isinstance(value, str):
                value = _from_string(value, f.name, kind)
            if kind == "boolean" and not isinstance(value, bool):
                raise InvalidOption(f"'{f.name}' must be true or false")
            if kind == "string" and not isinstance(value, str):
                raise InvalidOption(f"'{f.name}' must be a string")
            if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
                raise InvalidOption(f"'{f.name}' must be a whole number")
            if kind == "string" and not value:
                continue  # "" means "not given" (an empty form field)
            values[f.name] = value
        if "favor" in values and values["favor"] not in FAVOR_CHOICES:
            raise InvalidOption(f"'favor' must be one of {', '.join(FAVOR_CHOICES)}")
        return cls(**values).validate("payload")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ExtractOptions:
        """Options from parsed command-line arguments (those :func:`add_option_arguments`
        added; an option the command does not offer keeps its default), validated."""
        values = {
            f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)
        }
        return cls(**values).validate("cli")


DEFAULT_OPTIONS = ExtractOptions()


def _kind(f: dataclasses.Field) -> str:
    """The JSON type of an option's values."""
    declared = str(f.type)  # the annotation's text (this module postpones annotations)
    if declared.startswith("bool"):
        return "boolean"
    if declared.startswith("int"):
        return "integer"
    return "string"


def _from_string(value: str, name: str, kind: str) -> Any:
    if kind == "boolean":
        low = value.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise InvalidOption(f"'{name}' must be true or false, not {value!r}")
    if kind == "integer":
        try:
            return int(value)
        except ValueError:
            raise InvalidOption(f"'{name}' must be a whole number, not {value!r}") from None
    return value


def option_fields() -> tuple[dataclasses.Field, ...]:
    """The declarations, in order."""
    return dataclasses.fields(ExtractOptions)


def spell(name: str, door: Door, *, given: bool = False) -> str:
    """How ``door`` writes option ``name`` (``given``: as set to a value other than its
    default, for a bool the way that turns it off: ``--no-comments``, ``'comments': false``)."""
    f = next(f for f in option_fields() if f.name == name)
    if door == "cli":
        flags = f.metadata["flags"]
        return next((x for x in flags if x.startswith("--")), f"--{name.replace('_', '-')}")
    off = given and f.default is True
    if door == "payload":
        return f"'{name}': false" if off else f"'{name}'"
    keyword = f.metadata["alias"] if name == "method" else name
    return f"{keyword}=False" if off else keyword


def add_option_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    only: tuple[str, ...] | None = None,
    help: Mapping[str, str] | None = None,
) -> None:
    """Add the options (or ``only`` those) to a command's parser, each from its declaration;
    ``help`` replaces an option's help text where a command means something narrower."""
    for f in option_fields():
        if only is not None and f.name not in only:
            continue
        meta = f.metadata
        text = (help or {}).get(f.name, meta["help"])
        kwargs: dict[str, Any] = {"dest": f.name, "help": text}
        kind = _kind(f)
        if kind == "boolean":
            kwargs["action"] = "store_false" if f.default else "store_true"
        else:
            kwargs["default"] = f.default
            if meta["choices"]:
                kwargs["choices"] = meta["choices"]
            if kind == "integer":
                kwargs["type"] = int
            if meta["metavar"]:
                kwargs["metavar"] = meta["metavar"]
        parser.add_argument(*meta["flags"], **kwargs)


def json_schema_properties() -> dict[str, dict[str, Any]]:
    """The options as JSON Schema properties (the OpenAPI request bodies, the MCP tool)."""
    props: dict[str, dict[str, Any]] = {}
    for f in option_fields():
        kind = _kind(f)
        prop: dict[str, Any] = {"type": kind, "description": f.metadata["help"]}
        if f.metadata["choices"]:
            prop["enum"] = list(f.metadata["choices"])
        if f.default is not None:
            prop["default"] = f.default
        if f.metadata["minimum"] is not None:
            prop["minimum"] = f.metadata["minimum"]
        props[f.name] = prop
    return props
