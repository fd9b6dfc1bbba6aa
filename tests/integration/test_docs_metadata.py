"""The uploads guide's typed-metadata block, run against the emulator."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from tests.integration.test_docs import doc_block, run_fragment
from vidapi_async.emulator import Emulator


async def test_the_typed_metadata_block_runs_and_says_what_it_wrote(
    client: va.Client,
    emulator: Emulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make_file(tmp_path / "movie.mp4", 10_000)
    monkeypatch.chdir(tmp_path)
    await run_fragment(doc_block("typed-metadata"), client=client)
    [stored] = emulator.videos()
    assert stored["tags"] == ["cycling", "mountains", "sprint"]
    assert stored["language"] == "fr" and stored["geoblocking"] is None
    assert isinstance(stored["publish_date"], int)
    tags, _, rest = capsys.readouterr().out.partition("] ")
    assert tags == "['cycling', 'mountains', 'sprint'"
    when, none, url = rest.rsplit(" ", 2)
    assert datetime.fromisoformat(when).tzinfo is not None
    assert none == "None"
    assert url.strip() == f"{emulator.base_url}/page/video/{stored['id']}"
