"""What a newcomer meets first in the vidapi command: its results on stdout (where a
``| grep`` finds them), its progress and diagnostics on stderr, every option explained
with its default, and an error that says each fact once."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from tests.cli_run import closed_pipe_run, vidapi, vidapi_process
from tests.conftest import make_file
from vidapi_async.cli._exit import EXIT_API
from vidapi_async.emulator import Emulator

CLIENT_ONLY = ("--token", "--retries", "--proxy", "--json", "--base-url")


def commands() -> dict[str, argparse.ArgumentParser]:
    from vidapi_async.cli._main import _parser

    [sub] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


async def test_demo_prints_its_results_on_stdout() -> None:
    """``vidapi demo --no-serve | grep embed`` finds the embed code (before: every line
    went to stderr and the pipe got nothing)."""
    code, out, err = await vidapi_process("demo", "--no-serve")  # demo handles signals
    assert code == 0, err
    video_id = re.search(r"created video (x\w+)", out)
    assert video_id, out
    assert 'src="http://127.0.0.1:' in out and f"/embed/video/{video_id.group(1)}" in out
    assert "<iframe" in out and "embed URL: http://" in out
    assert "attached subtitle" in out and "created live stream" in out
    # stderr keeps the progress (the upload's bar), never the results
    assert "<iframe" not in err and "created video" not in err and "embed URL" not in err
    assert "vidapi-demo.webm" in err  # the bar names the file it sends


async def test_serve_prints_its_addresses_on_stdout_and_ctrl_c_on_stderr() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "vidapi_async.cli", "serve", "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        said = await asyncio.wait_for(proc.stderr.readline(), 60)
        assert b"Ctrl-C to stop" in said, said
        banner = b""
        while not banner.endswith(b"/v2\n"):  # the API v2 line ends it
            line = await asyncio.wait_for(proc.stdout.readline(), 10)
            assert line, banner
            banner += line
        api = re.search(rb"^API:\s+(http://127\.0\.0\.1:\d+)$", banner, re.M)
        assert api, banner
        assert b"export VIDAPI_TOKEN=" in banner
        # what to export for API v2 is said plainly: v2's root in place of the first line
        # (a comment: the block pasted whole keeps the legacy root)
        exports = re.findall(rb"^(# )?export VIDAPI_BASE_URL=(\S+)$", banner, re.M)
        assert exports == [(b"", api.group(1)), (b"# ", api.group(1) + b"/v2")], banner
        assert b"# For API v2" in banner
    finally:
        proc.terminate()
        await proc.wait()


async def test_logout_says_what_it_did_on_stdout(tmp_path: Path) -> None:
    env = {"VIDAPI_LOGIN_FILE": str(tmp_path / "login.json")}
    code, out, err = await vidapi("logout", env=env)
    assert (code, out.strip(), err) == (0, "no login was kept", "")


def test_every_option_of_every_command_says_what_it_does_and_its_default() -> None:
    from vidapi_async.cli._main import _parser

    missing: list[tuple[str, str]] = []
    no_default: list[tuple[str, str]] = []
    for name, parser in {"vidapi": _parser(), **commands()}.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            what = (name, "/".join(action.option_strings) or action.dest)
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(what)
                continue
            takes_value = action.option_strings and action.nargs != 0
            if takes_value and not action.required and "default" not in action.help:
                no_default.append(what)
    assert missing == []
    assert no_default == []


@pytest.mark.parametrize("command", ["serve", "demo", "embed", "logout"])
def test_a_command_offers_only_the_options_it_uses(command: str) -> None:
    offered = {s for a in commands()[command]._actions for s in a.option_strings}
    assert offered & set(CLIENT_ONLY) == set()


def test_serve_refuses_a_client_option_after_its_name() -> None:
    from vidapi_async.cli._main import _parser

    with pytest.raises(SystemExit) as exited:
        _parser().parse_args(["serve", "--token", "t"])
    assert exited.value.code == 2


def test_the_help_of_serve_explains_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    from vidapi_async.cli._main import _parser

    with pytest.raises(SystemExit):
        _parser().parse_args(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option, words in (
        ("--host", "default: 127.0.0.1"),
        ("--port", "default 8400"),
        ("--error-rate", "default 0"),
        ("--rate-limit-rate", "429"),
        ("--reset-rate", "cut off"),
        ("--videos-per-day", "quota"),
        ("--seed", "repeat"),
        ("--public-host", "dot"),
    ):
        at = text.index(f" {option} ", text.index("options:"))
        assert words in text[at : at + 400], option
    for option in CLIENT_ONLY:
        assert option not in text


async def test_an_unknown_api_path_is_said_once(emulator: Emulator) -> None:
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, out, err = await vidapi("api", "/nope", env=env)
    assert (code, out) == (EXIT_API, "")
    [line] = err.splitlines()
    assert line.count("/nope") == 1, line
    assert line.count("404") == 1, line
    assert "GET" in line and line.lower().count("not found") == 0, line


def test_the_cli_reference_generator_lists_each_commands_options() -> None:
    """docs/reference/cli.md is built from the parser: serve's section has its help
    texts, and no client option."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
    try:
        import docs_cli_reference
    finally:
        sys.path.pop(0)
    page = docs_cli_reference.cli_markdown()
    serve = page.split("## `vidapi serve`", 1)[1].split("\n## ", 1)[0]
    assert "`--public-host` `NAME`" in serve and "`--error-rate` `P`" in serve
    assert "--token" not in serve and "--retries" not in serve
    assert "%(default)" not in page
    assert "default: 0.2" not in serve  # said once, in the help's own words


def test_an_error_message_that_names_the_request_is_not_prefixed_with_it_again() -> None:
    """A server whose message names the request (as the emulator's did: ``Not Found:
    GET /nope``): the error says ``GET /nope`` once."""
    from vidapi_async import _protocol as wire

    request = wire.api_request("https://a.example", "GET", "/nope")
    echoed = b'{"error": {"code": 404, "message": "Not Found: GET /nope", "type": "not_found"}}'
    assert str(wire.api_error(request, 404, {}, echoed)).count("GET /nope") == 1
    plain = b'{"error": {"code": 404, "message": "no such endpoint", "type": "not_found"}}'
    assert str(wire.api_error(request, 404, {}, plain)) == (
        "GET /nope: no such endpoint (HTTP 404 not_found)"
    )


async def test_results_into_a_closed_pipe_end_quietly_with_141(
    emulator: Emulator, tmp_path: Path
) -> None:
    """``vidapi demo --no-serve | head -1``, or a status table into a closed pipe: the
    rich console on stdout ended with rich's own exit 1; now 141, as print's output."""
    from vidapi_async.cli._exit import EXIT_BROKEN_PIPE

    code, err = await closed_pipe_run("demo", "--no-serve", env={})
    assert (code, err.count("Traceback")) == (EXIT_BROKEN_PIPE, 0), err
    journal = tmp_path / "j.sqlite"
    (tmp_path / "src").mkdir()
    make_file(tmp_path / "src" / "a.mp4", 20_000)
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, _, err = await vidapi("batch", str(tmp_path / "src"), "--channel", "news",
                                "--journal", str(journal), env=env)  # fmt: skip
    assert code == 0, err
    code, err = await closed_pipe_run("status", "--journal", str(journal), env={})
    assert (code, err) == (EXIT_BROKEN_PIPE, ""), err
