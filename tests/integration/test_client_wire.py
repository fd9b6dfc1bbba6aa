"""Regression tests for the client on a real wire (issue: correct on a real wire).

The oracle is ``tests/wire.py``: a scripted server that shares no code with the client
or the emulator, sees the request target byte for byte, and answers the way slow or
hostile servers do (segments with pauses, trickles, short bodies, cut connections).
"""

from __future__ import annotations

import asyncio
import json
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import vidapi_async as va
from tests.conftest import fast_retry, make_file
from tests.wire import Reply, Seen, WireServer, self_signed
from vidapi_async.testing import client_for

TOKEN = "wire-token-0123456789"
SEAL = "ab%2Fcd%2Bef%3Dgh%26ij"
"""A seal holding escaped reserved characters: re-encoding it changes it."""


def chain(exc: BaseException) -> list[BaseException]:
    """The exception and everything reachable as its cause or context."""
    out: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        item = todo.pop()
        if item is None or any(item is seen for seen in out):
            continue
        out.append(item)
        todo += [item.__cause__, item.__context__]
    return out


def leaks(exc: BaseException, *secrets: str) -> list[str]:
    """Every place in the exception chain where a secret shows."""
    found = []
    for item in chain(exc):
        texts = [str(item), repr(item), *(repr(a) for a in item.args)]
        texts += [repr(v) for v in vars(item).values()] if hasattr(item, "__dict__") else []
        for text in texts:
            found += [f"{type(item).__name__}: {s}" for s in secrets if s in text]
    return found


def descriptor(url: str) -> dict[str, str]:
    return {"url": url, "size": "10", "name": "movie", "streamable": "No"}


def video_page(start: int, count: int, more: bool) -> dict[str, Any]:
    items = [
        {"id": f"x{n:06d}", "title": f"video {n}", "description": "d" * 4000}
        for n in range(start, start + count)
    ]
    return {"page": 1, "limit": count, "has_more": more, "total": 999, "list": items}


# --- 1. answers read whole ------------------------------------------------------------


async def test_a_large_answer_in_segments_is_read_whole() -> None:
    def handler(seen: Seen) -> Reply:
        page = int(seen.raw_query.split("page=")[1].split("&")[0])
        body = video_page((page - 1) * 100, 100, page < 2)
        return Reply.json(body, segment=8192, pause=0.002)

    async with WireServer(handler) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        ids = [v.id async for v in client.iter_videos(("id", "title", "description"))]
    assert ids == [f"x{n:06d}" for n in range(200)]


async def test_iter_videos_over_the_emulator_with_long_descriptions(
    emulator: va.emulator.Emulator, tmp_path: Path
) -> None:
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        uploaded = await client.upload_file(make_file(tmp_path / "v.mp4", 1000))
        for n in range(100):
            await client.create_video(
                url=uploaded.url,
                title=f"v{n}",
                channel="news",
                description=f"{n}" + "é" * 2000,
            )
        got = [v async for v in client.iter_videos(("id", "title", "description"))]
    assert [v.title for v in got] == [f"v{n}" for n in range(100)]
    assert all(len(v.fields["description"]) > 2000 for v in got)


async def test_a_body_shorter_than_its_length_is_a_lost_connection_and_reads_retry() -> None:
    answers = [
        Reply.json({"id": "x1", "title": "t"}, content_length=400),
        Reply.json({"id": "x1", "title": "t"}),
    ]

    async with WireServer(lambda _: answers.pop(0)) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.ConnectionLostError):
                await client.get_video("x1")
        async with va.Client(TOKEN, base_url=srv.url, retry=fast_retry()) as client:
            assert (await client.get_video("x1")).title == "t"


async def test_a_reset_mid_body_is_a_lost_connection() -> None:
    reply = Reply.json(video_page(0, 50, False), cut_after=3000, segment=1000, pause=0.01)
    async with WireServer(lambda _: reply) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.ConnectionLostError):
                await client.get_video("x1")


# --- 2. addresses used byte-exact -----------------------------------------------------


def upload_api(srv_url: list[str]) -> Any:
    """API + upload server on one port: an upload address with an escaped seal."""

    def handler(seen: Seen) -> Reply:
        if seen.path == "/file/upload":
            return Reply.json(
                {
                    "upload_url": f"{srv_url[0]}/upload?uuid=u1&seal={SEAL}",
                    "progress_url": f"{srv_url[0]}/progress?uuid=u1&seal={SEAL}",
                }
            )
        if seen.path == "/progress":
            return Reply.json({"state": "uploading", "size": "10", "received": "5"})
        if seen.path == "/upload":
            if seen.raw_query != f"uuid=u1&seal={SEAL}":
                return Reply.json({"error": "bad seal"}, status=403)
            cr = seen.headers.get("content-range")
            if cr and not cr.endswith("-9999/10000"):
                return Reply(202, b"{}", {"Range": f"0-{cr.split('-')[1].split('/')[0]}/10000"})
            return Reply.json(descriptor(f"{srv_url[0]}/files/f.mp4#x"))
        if seen.path == "/me/videos" and seen.method == "POST":
            return Reply.json({"id": "x1", "title": "t"})
        return Reply.json({"error": {"code": 404, "message": "no"}}, status=404)

    return handler


@pytest.mark.parametrize("chunked", [False, True])
async def test_the_upload_url_is_sent_exactly_as_returned(tmp_path: Path, chunked: bool) -> None:
    urls: list[str] = []
    async with WireServer(upload_api(urls)) as srv:
        urls.append(srv.url)
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            path = make_file(tmp_path / "movie.mp4", 10_000)
            kw: dict[str, Any] = {"chunked": True, "range_size": 4096} if chunked else {}
            await client.upload_file(path, **kw)
            session = await client.get_upload_session()
            await client.get_upload_progress(session)
    targets = [s.target for s in srv.seen if s.path in ("/upload", "/progress")]
    assert targets
    assert all(t.endswith(f"uuid=u1&seal={SEAL}") for t in targets), targets


# --- 3. private stays private ---------------------------------------------------------


def bad_srt(tmp_path: Path) -> Path:
    path = tmp_path / "broken.srt"
    path.write_text("1\n00:00:01,000 --> nonsense\nHello\n", encoding="utf-8")
    return path


async def test_batch_checks_subtitles_before_uploading(
    emulator: va.emulator.Emulator, tmp_path: Path
) -> None:
    video = make_file(tmp_path / "movie.mp4", 5000)
    jobs = [
        va.UploadJob(
            path=video,
            title="secret",
            channel="news",
            password="hunter22",
            subtitles=[va.SubtitleSpec("en", path=bad_srt(tmp_path))],
        ),
        va.UploadJob(
            path=video,
            title="secret 2",
            channel="news",
            password="hunter22",
            subtitles=[va.SubtitleSpec("fr", path=tmp_path / "missing.srt")],
            key="second",
        ),
    ]
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client) as batch:
            results = [r async for r in batch.run(jobs)]
    assert [r.status for r in results] == [va.JobStatus.FAILED] * 2
    assert {type(r.error) for r in results} == {va.SubtitleFileError, va.FileError}
    assert not [r for r in emulator.requests if r.host == "upload"]
    assert emulator.videos() == []


async def test_batch_creates_a_protected_video_in_one_request(
    emulator: va.emulator.Emulator, tmp_path: Path, srt_file: Path
) -> None:
    job = va.UploadJob(
        path=make_file(tmp_path / "movie.mp4", 5000),
        title="private",
        channel="news",
        password="hunter22",
        subtitles=[va.SubtitleSpec("en", path=srt_file)],
    )
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client) as batch:
            [result] = [r async for r in batch.run([job])]
        assert result.status is va.JobStatus.DONE, result.error
        assert result.video_id is not None
        video = await client.get_video(result.video_id, ["id", "password_protected"])
    assert video.password_protected is True
    writes = [r for r in emulator.requests if r.method == "POST" and r.path.startswith("/video/")]
    assert [r.path for r in writes] == [f"/video/{result.video_id}/subtitles"]


# --- 4. one bad job never stops the batch ---------------------------------------------


async def test_odd_names_and_keys_fail_or_pass_alone(
    emulator: va.emulator.Emulator, tmp_path: Path
) -> None:
    odd = make_file(tmp_path / "a\x01b\x7fc\td.mp4", 5000)
    plain = make_file(tmp_path / "plain.mp4", 5000)
    jobs = [
        va.UploadJob(path=odd, title="odd", channel="news"),
        va.UploadJob(path=plain, title="accents", channel="news", key="vidéo-été-1"),
    ]
    async with client_for(emulator, retry=va.NO_RETRY) as client:
        async with va.BatchUploader(client, chunked=True, workers=2) as batch:
            results = [r async for r in batch.run(jobs)]
    assert [r.status for r in results] == [va.JobStatus.DONE] * 2, [r.error for r in results]
    assert len(emulator.videos()) == 2


async def test_a_create_answer_without_an_id_fails_that_job_only(tmp_path: Path) -> None:
    urls: list[str] = []
    inner = upload_api(urls)
    creates: list[str] = []

    def handler(seen: Seen) -> Reply:
        if seen.path == "/me/videos" and seen.method == "POST":
            creates.append(seen.body.decode())
            if "title=bad" in creates[-1]:
                return Reply.json({"id": None, "title": "bad"})
            return Reply.json({"id": f"x{len(creates)}", "title": "good"})
        if seen.path == "/me/videos":
            return Reply.json({"list": [], "has_more": False})
        return inner(seen)  # type: ignore[no-any-return]

    journal = tmp_path / "journal.sqlite"
    jobs = [
        va.UploadJob(path=make_file(tmp_path / f"{n}.mp4", 100), title=t, channel="news")
        for n, t in enumerate(["bad", "good"])
    ]
    async with WireServer(handler) as srv:
        urls.append(srv.url)
        for _ in range(2):  # a second run resumes the failed job: it fails alone again
            async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
                async with va.BatchUploader(client, journal=journal) as batch:
                    results = {r.job.title: r async for r in batch.run(jobs)}
            assert results["bad"].status is va.JobStatus.FAILED
            assert isinstance(results["bad"].error, va.UnexpectedResponseError)
            assert results["good"].ok


# --- 5. bounded loops and waits -------------------------------------------------------


async def test_iter_videos_stops_on_an_empty_page_that_claims_more() -> None:
    reply = Reply.json({"page": 1, "limit": 100, "has_more": True, "list": []})
    async with WireServer(lambda _: reply) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        got = await asyncio.wait_for(_collect(client.iter_videos()), 10)
    assert got == []
    assert len(srv.seen) == 1


async def _collect(it: Any) -> list[Any]:
    return [x async for x in it]


async def test_a_short_lived_token_is_not_fetched_before_every_call() -> None:
    def handler(seen: Seen) -> Reply:
        if seen.path == "/oauth/token":
            return Reply.json({"access_token": "short", "expires_in": 30, "token_type": "Bearer"})
        return Reply.json({"id": "x1"})

    auth = va.OAuth.client_credentials("cid", "csecret")
    async with WireServer(handler) as srv, va.Client(auth=auth, base_url=srv.url) as client:
        for _ in range(5):
            await client.get_video("x1")
    assert [s.path for s in srv.seen].count("/oauth/token") == 1


@pytest.mark.usefixtures("upload_path")
async def test_a_trickled_upload_answer_times_out(tmp_path: Path) -> None:
    urls: list[str] = []
    inner = upload_api(urls)

    def handler(seen: Seen) -> Reply:
        if seen.path == "/upload":
            body = json.dumps(descriptor("http://x/f#y")).encode()
            return Reply(200, body, {"Content-Type": "application/json"}, segment=1, pause=0.2)
        return inner(seen)  # type: ignore[no-any-return]

    timeouts = va.Timeouts(upload_read=1.0)
    async with WireServer(handler) as srv:
        urls.append(srv.url)
        async with va.Client(
            TOKEN, base_url=srv.url, retry=va.NO_RETRY, timeouts=timeouts
        ) as client:
            with pytest.raises(va.RequestTimeoutError):
                await asyncio.wait_for(client.upload_file(make_file(tmp_path / "m.mp4", 1000)), 15)


def test_a_day_long_retry_after_is_never_slept() -> None:
    policy = va.RetryPolicy(max_total=None, max_delay=30.0, random=lambda: 0.5)
    exc = va.RateLimitedError("slow down", status=429, retry_after=86400.0)
    wait = policy.delay(exc, 1, started=0.0, idempotent=True)
    assert wait is None or wait <= policy.max_delay


# --- 6. no downgrade, no leaks --------------------------------------------------------


async def test_an_http_upload_address_under_an_https_api_is_refused(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    plain_seen: list[Seen] = []

    async with WireServer(lambda s: plain_seen.append(s) or Reply.json({})) as plain:

        def api(seen: Seen) -> Reply:
            return Reply.json(
                {"upload_url": f"{plain.url}/upload?uuid=u&seal=s", "progress_url": plain.url}
            )

        async with WireServer(api, tls=server_ctx) as secure:
            trust = ssl.create_default_context(cafile=str(cert))
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=trust)) as s:
                client = va.Client(TOKEN, base_url=secure.url, session=s, retry=va.NO_RETRY)
                async with client:
                    with pytest.raises(va.InsecureURLError):
                        await client.upload_file(make_file(tmp_path / "m.mp4", 1000))
    assert plain_seen == []


async def test_transport_errors_hold_no_token_anywhere() -> None:
    # A status line aiohttp cannot parse: its error carries the request's headers.
    garbage = Reply(raw=b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n")
    async with WireServer(lambda _: garbage) as srv:
        async with va.Client(TOKEN, base_url=srv.url, retry=va.NO_RETRY) as client:
            with pytest.raises(va.VidapiError) as info:
                await client.get_video("x1")
    assert leaks(info.value, TOKEN) == []


async def test_an_oauth_error_echoing_the_form_shows_no_secret() -> None:
    def handler(seen: Seen) -> Reply:
        echoed = seen.body.decode()
        return Reply.json(
            {"error": "invalid_grant", "error_description": f"refused: {echoed}", "form": echoed},
            status=400,
        )

    auth = va.OAuth.password("cid", "client-secret-xyz", username="ann", password="pass-word-123")
    async with WireServer(handler) as srv, va.Client(auth=auth, base_url=srv.url) as client:
        with pytest.raises(va.OAuthError) as info:
            await client.get_video("x1")
    assert leaks(info.value, "client-secret-xyz", "pass-word-123") == []


def test_credentials_in_the_base_url_are_refused_without_echo() -> None:
    with pytest.raises(va.InvalidArgumentError) as info:
        va.Client(TOKEN, base_url="http://user:s3cr3t-pw@127.0.0.1:1/")
    assert leaks(info.value, "s3cr3t-pw") == []


async def test_a_large_answer_is_decoded_off_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from vidapi_async import _protocol

    decoded_in: list[int] = []
    real = _protocol.decode_api_response

    def recording(*args: Any, **kwargs: Any) -> Any:
        decoded_in.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(_protocol, "decode_api_response", recording)
    pages = [Reply.json(video_page(0, 100, False)), Reply.json({"id": "x1"})]  # 400 KB, 12 B
    async with WireServer(lambda _: pages.pop(0)) as srv, va.Client(TOKEN, base_url=srv.url) as c:
        assert len([v async for v in c.iter_videos()]) == 100
        await c.get_video("x1")
    loop_thread = threading.get_ident()
    assert decoded_in[0] != loop_thread  # the large page, in a worker thread
    assert decoded_in[1] == loop_thread  # a small answer: no hop


# --- who is calling ---------------------------------------------------------------------


@pytest.mark.parametrize("own_session", [True, False])
async def test_every_request_says_who_is_calling(tmp_path: Path, own_session: bool) -> None:
    """``User-Agent: vidapi-async/V aiohttp/V python/V`` on API calls and uploads alike
    (the pump writes its requests by hand); a caller's session's own agent is kept, for
    uploads too."""
    import platform

    urls: list[str] = []
    async with WireServer(upload_api(urls)) as srv:
        urls.append(srv.url)
        session = None if own_session else aiohttp.ClientSession(headers={"User-Agent": "mine/1"})
        try:
            async with va.Client(
                TOKEN, base_url=srv.url, retry=va.NO_RETRY, session=session
            ) as client:
                await client.upload_file(make_file(tmp_path / "movie.mp4", 10_000))
                await client.upload_file(
                    make_file(tmp_path / "c.mp4", 10_000), chunked=True, range_size=4096
                )
        finally:
            if session is not None:
                await session.close()
    agents = {s.path: s.headers.get("user-agent") for s in srv.seen}
    assert set(agents) >= {"/file/upload", "/upload"}
    ours = (
        f"vidapi-async/{va.__version__} aiohttp/{aiohttp.__version__} "
        f"python/{platform.python_version()}"
    )
    assert agents["/upload"] == agents["/file/upload"] == (ours if own_session else "mine/1")


def _shown_forms(secret: str) -> list[str]:
    """The ways a server may echo a form's value: raw, form-encoded, percent-encoded
    (either case of hex digit)."""
    from urllib.parse import quote, quote_plus

    forms = {secret, quote_plus(secret), quote(secret, safe=""), quote(secret)}
    return sorted(forms | {f.lower() for f in forms if "%" in f})


def _echo_form(seen: Seen) -> Reply:
    """An API that echoes the form it got in every shape: raw, decoded, as JSON."""
    from urllib.parse import parse_qsl

    raw = seen.body.decode()
    fields = dict(parse_qsl(raw))
    message = f"refused: {raw} (decoded: {fields}; lower: {raw.lower()})"
    body = {"error": {"code": 400, "message": message, "type": "invalid_parameter"}}
    return Reply.json({**body, "error_description": message, "form": fields}, status=400)


@pytest.mark.parametrize("password", ["p@ss w+rd/1", "Pässwörter9", "ab", "Z"])
async def test_an_echoed_password_is_masked_in_every_encoding_and_length(password: str) -> None:
    import re

    async with WireServer(_echo_form) as srv, va.Client(TOKEN, base_url=srv.url) as client:
        with pytest.raises(va.APIError) as info:
            await client.set_password("x123", password)
    assert srv.seen[0].body  # the server did get (and echo) the form
    texts = [str(info.value), repr(info.value), repr(info.value.body)]
    for form in _shown_forms(password):
        if len(password) > 2:
            assert leaks(info.value, form) == []
        else:  # a word of one or two characters: as a word, or as the field's value
            found = [t for t in texts if re.search(rf"(?<![\w%]){re.escape(form)}(?!\w)", t)]
            assert found == [], form
    assert "password=***" in str(info.value)  # still readable: what was echoed, masked


async def test_an_oauth_echo_masks_short_and_encoded_credentials() -> None:
    auth = va.OAuth.password("cid", "k9", username="ann", password="p@ss w+rd/1")
    async with WireServer(_echo_form) as srv, va.Client(auth=auth, base_url=srv.url) as client:
        with pytest.raises(va.OAuthError) as info:
            await client.get_video("x1")
    assert srv.seen[0].body
    assert leaks(info.value, *_shown_forms("p@ss w+rd/1")) == []
    assert "k9" not in str(info.value) and "k9" not in repr(info.value.body)
