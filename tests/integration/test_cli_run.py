"""The tests' in-process ``vidapi`` (tests/cli_run.py): it answers as the command run
in a child does, and leaves nothing of a run behind for the next test."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path

import pytest

from tests import cli_run
from tests.cli_run import CLI_LOGGERS, vidapi, vidapi_process


@pytest.mark.parametrize(
    "args",
    [
        ["embed", "x7tgad0", "--autoplay", "--mute"],
        ["embed", "x7tgad0", "--bogus"],  # argparse's usage error: exit 2
        ["video", "x1"],  # no token: the command's own usage error
        ["status", "--help"],  # argparse's exit 0
        ["--version"],
    ],
)
async def test_in_process_answers_as_a_child_does(args: list[str]) -> None:
    env = {"VIDAPI_TOKEN": "", "VIDAPI_EMBED_URL": "http://127.0.0.1:9/e"}
    assert await vidapi(*args, env=env) == await vidapi_process(*args, env=env)


def _process_state() -> object:
    loggers = [logging.getLogger(name) for name in CLI_LOGGERS]
    return (
        dict(os.environ),
        os.getcwd(),
        (sys.stdin, sys.stdout, sys.stderr),
        [(lg.name, list(lg.handlers), lg.level) for lg in loggers],
        logging._warnings_showwarning,  # type: ignore[attr-defined]  # captureWarnings
    )


PG = "postgresql://u@127.0.0.1:1/x"


@pytest.mark.parametrize(
    "args",
    [
        ["status", "--journal", "none.sqlite"],
        ["-vv", "status", "--journal", "none.sqlite"],
        # JSON logs (handlers on the root logger, Python's warnings captured), then a
        # refused setting
        [*("--token", "t", "--retries", "0", "worker", "--log-format", "json"), "--journal", PG],
    ],
    ids=["text", "debug", "json"],
)
async def test_a_run_leaves_the_process_as_it_found_it(tmp_path: Path, args: list[str]) -> None:
    before = _process_state()
    code, _, err = await vidapi(
        *args, env={"VIDAPI_PLANTED": "1", "VIDAPI_LOG": "debug"}, cwd=tmp_path
    )
    assert code != 0 and ("none.sqlite" in err or "--retries" in err), err  # it ran
    assert _process_state() == before


async def test_a_warning_in_the_command_fails_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """``filterwarnings = error`` reaches the command: a leak it warns of is an error
    (a child would have printed it and exited 0)."""
    from vidapi_async import embed

    def leaky(*args: object, **kwargs: object) -> str:
        warnings.warn("unclosed planted resource", ResourceWarning, stacklevel=1)
        return ""

    monkeypatch.setattr(embed, "iframe_html", leaky)
    with pytest.raises(ResourceWarning, match="planted"):
        await vidapi("embed", "x7tgad0")


async def test_two_runs_at_once_are_refused_not_mixed() -> None:
    """A run while another is under way (its lock held here: two runs started together
    may also run one after the other, the first done before the second starts)."""
    with cli_run._one_at_a_time:
        with pytest.raises(RuntimeError, match="vidapi_process"):
            await vidapi("embed", "x7tgad0")
    code, out, _ = await vidapi("embed", "x7tgad1")  # and the next run goes
    assert code == 0 and "x7tgad1" in out
