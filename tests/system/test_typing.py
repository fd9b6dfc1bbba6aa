"""The public signatures as a type checker sees them: a user's module is checked with
``mypy --strict``; the good calls pass, each bad call is reported at its own line, and
``reveal_type`` shows an operation's parameters (not ``(*Any, **Any)``).

mypy runs in a fresh process on a module written to a temporary folder, with the
package found on ``MYPYPATH`` (an editable install is an import hook mypy cannot
follow) and a cache of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import vidapi_async as va

pytestmark = pytest.mark.system  # a mypy run from scratch: 5-10 s

ROOT = Path(va.__file__).parent.parent

GOOD = """
import asyncio
from datetime import datetime, timezone
from vidapi_async import NOT_GIVEN, Client, Subtitle, Video

async def good(client: Client) -> Video:
    Client("token", connection_limit=10, chunk_size=NOT_GIVEN)
    video = await client.get_video("x1", fields=["id", "title"])
    await client.get_video(video, ["id"])
    await client.upload_video("a.mp4", title="t", channel="news")
    await client.create_video(url="https://u/x", title="t", channel="news")
    await client.update_video("x1", title="t", publish_date=None, extra={"allow_embed": "1"})
    await client.upload_video(
        "a.mp4",
        title="t",
        channel="news",
        tags=["a", "b"],
        language="en",
        publish_date=datetime(2030, 1, 1, tzinfo=timezone.utc),
        geoblocking=("deny", "fr"),
    )
    await client.playlists.create(name="n")
    await client.players.create(label="p", mute=True, color="#ff0000")
    # the namespaces
    await client.videos.upload("a.mp4", title="t", channel="news", tags=["a"])
    await client.videos.create(url="https://u/x", title="t", channel="news")
    one: Video = await client.videos.get("x1", ["id"])
    await client.videos.update(one, title="t", publish_date=None)
    await client.videos.set_password(one, None)
    await client.videos.wait_until_ready(one, timeout=10.0)
    slugs: list[str] = await client.videos.categories()
    await client.uploads.file(b"bytes", filename="a.mp4", chunked=False)
    await client.uploads.from_url("https://h/a.mp4", headers={"a": "b"})
    await client.subtitles.create(one, language="en", url="https://u/en.srt")
    subtitles: list[Subtitle] = await client.subtitles.list(one)
    await client.live.create(title="t", channel="news", start_time=1)
    await client.account.me()
    await client.raw.get("/me", fields="id")
    async for mine in client.videos.mine(["id"], page_size=10):
        assert isinstance(mine, Video)
    # the flat aliases, async generators too
    await client.create_subtitle(one, language="en", url="https://u/en.srt")
    await client.create_live_stream(title="t", channel="news")
    await client.set_password("x1", "pw")
    await client.make_live(one)
    async for old in client.iter_videos(page_size=5):
        assert isinstance(old, Video)
    async for item in client.paginate("/me/videos", fields="id", max_items=3):
        assert isinstance(item["id"], str)
    # an operation is a coroutine: it can be a task of its own
    task = asyncio.create_task(client.get_video("x1"))
    other = asyncio.create_task(client.videos.get("x2"))
    assert isinstance(await task, Video) and isinstance(await other, Video)
    return video
"""

# Each bad call on a line of its own, marked ``# BAD``: mypy must report that line.
BAD = """
import vidapi_async
from vidapi_async import Client

vidapi_async.Clinet  # BAD
from vidapi_async import BatchUploaderr  # BAD

async def bad(client: Client) -> None:
    await vidapi_async.BatchUploader(client, concurrency="8").run([])  # BAD
    await client.upload_video(12345, bogus=1)  # BAD
    await client.get_video("x1", fieldz=3)  # BAD
    await client.get_video(42)  # BAD
    Client("token", connection_limit=object())  # BAD
    Client("token", chunk_size="big")  # BAD
    await client.create_video(url="https://u/x", title=3, channel="news")  # BAD
    await client.upload_file("a.mp4", chunked="yes")  # BAD
    await client.wait_until_ready("x1", timout=3)  # BAD
    await client.playlists.get("x1", feilds=["id"])  # BAD
    await client.delete_video()  # BAD
    await client.update_video("x1", titel="t")  # BAD
    await client.playlists.update("x1", owner="me")  # BAD
    await client.players.create(label="p", color=object())  # BAD
    await client.update_video("x1", tags=[1, 2])  # BAD
    await client.upload_video("a.mp4", title="t", channel="c", publish_date="2030")  # BAD
    await client.create_video(url="u", title="t", channel="c", publish_date=None)  # BAD
    await client.videos.upload(12345, bogus=1)  # BAD
    await client.videos.get("x1", fieldz=3)  # BAD
    await client.videos.update("x1", titel="t")  # BAD
    await client.uploads.file("a.mp4", chunked="yes")  # BAD
    await client.subtitles.create("x1", language=3, url="u")  # BAD
    await client.live.create(title="t")  # BAD
    await client.account.me(fields=1)  # BAD
    await client.create_subtitle("x1", url="u")  # BAD
    await client.create_live_stream(title="t", channel="c", start_time="now")  # BAD
    client.iter_videos(page_sise=5)  # BAD
    client.videos.mine(page_size="5")  # BAD
    client.paginate("/me", limit="all")  # BAD
    client.raw.get(path=3)  # BAD
    x: int = await client.get_video("x1")  # BAD
"""

REVEAL = """
from vidapi_async import Client

def show(client: Client) -> None:
    reveal_type(client.get_video)
    reveal_type(client.upload_video)
    reveal_type(client.videos.get)
    reveal_type(client.iter_videos)
"""


def run_mypy(folder: Path, *modules: str) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` from scratch over ``modules`` (files in ``folder``), the package
    on ``MYPYPATH``."""
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--hide-error-context",
            "--show-error-codes",
            "--config-file",
            os.devnull,
            "--cache-dir",
            str(folder / ".mypy_cache"),
            *modules,
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert not done.stderr.strip() or "error" not in done.stderr, done.stderr
    return done


def _mypy(tmp_path: Path, name: str, text: str) -> list[str]:
    module = tmp_path / f"{name}.py"
    module.write_text(text, encoding="utf-8")
    done = run_mypy(tmp_path, str(module))
    return [line for line in done.stdout.splitlines() if line.startswith(f"{name}.py:")]


def _lines(out: list[str], kind: str) -> set[int]:
    found = set()
    for line in out:
        m = re.match(r"[^:]+:(\d+): (\w+):", line)
        if m and m.group(2) == kind:
            found.add(int(m.group(1)))
    return found


def test_user_code_is_checked_against_the_real_signatures(tmp_path: Path) -> None:
    # One mypy run over three modules would share the cache; three runs keep each
    # module's verdict apart and the second and third are fast (the cache is warm).
    good = _mypy(tmp_path, "good", GOOD)
    assert good == [], "\n".join(good)

    bad = _mypy(tmp_path, "bad", BAD)
    marked = {n for n, line in enumerate(BAD.splitlines(), 1) if line.endswith("# BAD")}
    assert _lines(bad, "error") == marked, "\n".join(bad)
    text = "\n".join(bad)
    # The namespaced method is named in the message; an alias's is its parameters'.
    assert 'for "upload"' in text and '"bogus"' in text
    assert '"fieldz"' in text and '"page_sise"' in text
    assert '"connection_limit"' in text and '"object"' in text

    shown = _mypy(tmp_path, "reveal", REVEAL)
    notes = [line for line in shown if ": note: Revealed type is" in line]
    assert len(notes) == 4, "\n".join(shown)
    get_video, upload_video, videos_get, iter_videos = notes
    assert "*Any" not in get_video and "**Any" not in get_video
    assert "(video_id: str | vidapi_async._models.Video, fields: " in get_video
    assert get_video.endswith('-> typing.Coroutine[Any, Any, vidapi_async._models.Video]"')
    assert "title: str" in upload_video and "channel: str" in upload_video
    # the alias and the namespaced method show one signature
    assert get_video.split("Revealed type is")[1] == videos_get.split("Revealed type is")[1]
    assert "*, page_size: int =" in iter_videos
    assert "AsyncIterator[vidapi_async._models.Video]" in iter_videos


def test_not_given_is_the_default_and_can_be_passed_on() -> None:
    assert repr(va.NOT_GIVEN) == "NOT_GIVEN" and not va.NOT_GIVEN
    client = va.Client("t", connection_limit=va.NOT_GIVEN, chunk_size=va.NOT_GIVEN)
    assert client.connection_limit == 100  # the default, and no deprecation warning
    assert va.Client("t", connection_limit=7).connection_limit == 7
