"""mkdocs hook: the CLI reference, generated from the ``vidapi`` argument parser.

``docs/reference/cli.md`` holds the marker below; at build time it is replaced by one
section per command (usage, every option with its help and default) and the exit codes
read from ``vidapi_async.cli._exit``. Nothing of it is written by hand, so it cannot
drift from the parser. The parser is built with the ``VIDAPI_*`` variables removed, so
a token or an address of the machine that builds the site never lands in a page.
"""

from __future__ import annotations

import argparse
import os
from typing import Any
from unittest import mock

MARKER = "<!-- generated: the vidapi parser -->"


def _parser() -> argparse.ArgumentParser:
    from vidapi_async.cli import _main

    clean = {k: v for k, v in os.environ.items() if not k.startswith("VIDAPI_")}
    with mock.patch.dict(os.environ, clean, clear=True):
        return _main._parser()


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help or "" for a in action._choices_actions}
    return {}


def _default(action: argparse.Action) -> str:
    value: Any = action.default
    if value in (None, False, [], argparse.SUPPRESS) or action.dest in {"token", "help"}:
        return ""
    if "default" in (action.help or ""):
        return ""  # the help says it, in words
    return f" (default: `{value}`)"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help text as ``--help`` shows it (``%(default)s`` and ``%(prog)s`` filled)."""
    if not action.help:
        return ""
    return parser._get_formatter()._expand_help(action)


def _options(parser: argparse.ArgumentParser, skip: frozenset[str] = frozenset()) -> list[str]:
    lines = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        if action.help == argparse.SUPPRESS or set(action.option_strings) & skip:
            continue
        if action.choices is not None:
            value = "{" + ",".join(map(str, action.choices)) + "}"
        else:
            value = action.metavar or (
                action.dest.upper() if action.option_strings else action.dest
            )
        if action.option_strings:
            name = ", ".join(f"`{s}`" for s in action.option_strings)
            if action.nargs != 0:
                name += f" `{value}`"
        else:
            name = f"`{value}` (argument)"
        text = _help(parser, action) + _default(action)
        lines.append(f"- {name}: {text.strip()}" if text.strip() else f"- {name}")
    return lines


GLOBAL = frozenset({"-v", "--verbose"})
"""The option every command takes (documented once, at the top); the others are listed
with each command that takes them."""


def cli_markdown() -> str:
    from vidapi_async.cli import _exit

    parser = _parser()
    helps = _helps(parser)
    skip = GLOBAL
    out = [
        "## `vidapi`",
        "",
        parser.description or "",
        "",
        "Options before the command (`-v` also after it; the others, after it too, "
        "for the commands that take them):",
        "",
        *_options(parser),
        "",
    ]
    for name, sub in sorted(_commands(parser).items()):
        usage = " ".join(sub.format_usage().split())[len("usage: ") :]
        out += [f"## `vidapi {name}`", "", helps.get(name, ""), "", "```text", usage, "```", ""]
        out += [*_options(sub, skip), ""]
    codes = sorted((value, name) for name, value in vars(_exit).items() if name.startswith("EXIT_"))
    out += ["## Exit codes", "", "| code | meaning |", "|---|---|"]
    out += [f"| {value} | `{name}` |" for value, name in codes]
    return "\n".join(out) + "\n"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, cli_markdown())
    return markdown
