"""A url job's default key: from the source url without its credentials (``user:pw@``)
and without the query parameters object stores sign with, so that neither the key nor
the video's ``vidapi-<key>`` tag (public) holds them or a digest of them (a weak
password would be cracked offline); and a journal written by an earlier version, keyed
by the digest of the whole url, still skips or resumes its job (no second video)."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import stored_bytes
from tests.wire import Reply, Seen, WireServer
from vidapi_async.batch import _disk_checks, _jobs
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for

PASSWORD = "hunter2"
SIGNATURE = "d3adb33fSIGNATURE"

SIGNED_SAME = [
    "https://bucket.example/v.mp4",
    "https://alice:hunter2@bucket.example/v.mp4",
    "https://bucket.example/v.mp4?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F1"
    "&X-Amz-Date=20260101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
    "&X-Amz-Signature=d3adb33f",
    "https://bucket.example/v.mp4?x-amz-signature=0ther&x-amz-security-token=tok",
    "https://bucket.example/v.mp4?X-Goog-Algorithm=GOOG4&X-Goog-Signature=abc&x-goog-date=1",
    "https://bucket.example/v.mp4?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01&st=2025-01-01"
    "&spr=https&sig=abc%3D&sr=b&si=policy1&sip=1.2.3.4&skoid=a&sktid=b&skt=c&ske=d&sks=e&skv=f",
    "https://bucket.example/v.mp4?Expires=1700000000&Signature=abc~def&Key-Pair-Id=K2",
    "https://bucket.example/v.mp4?Policy=eyJ&Signature=x&Key-Pair-Id=K3",
    "https://bob:pw@bucket.example/v.mp4?X-Amz-Signature=a&sig=b&Signature=c",
    "https://bucket.example/v.mp4?AWSAccessKeyId=AKIA&Expires=1&Signature=s",
    "https://bucket.example/v.mp4?GoogleAccessId=svc&Expires=1&Signature=s",
]


def test_urls_differing_only_in_credentials_or_signature_share_a_key() -> None:
    keys = {_jobs.url_key(url) for url in SIGNED_SAME}
    assert len(keys) == 1, keys


@pytest.mark.parametrize(
    "other",
    [
        "https://bucket.example/w.mp4",
        "https://other.example/v.mp4",
        "http://bucket.example/v.mp4",
        "https://bucket.example:8443/v.mp4",
        "https://bucket.example/v.mp4?version=2",
        "https://bucket.example/v.mp4?a=1&b=2",
        "https://bucket.example/v.mp4?b=2&a=1",  # order kept: another url
    ],
)
def test_other_parameters_and_parts_still_tell_urls_apart(other: str) -> None:
    base = {_jobs.url_key(u) for u in SIGNED_SAME}
    assert _jobs.url_key(other) not in base
    if other.endswith("a=1&b=2"):
        assert _jobs.url_key(other) != _jobs.url_key(other.replace("a=1&b=2", "b=2&a=1"))
    signed = other + ("&" if "?" in other else "?") + "X-Amz-Signature=zz"
    assert _jobs.url_key(signed) == _jobs.url_key(other)


def _digests(secret: str) -> set[str]:
    """Digests of the secret alone, as a key or tag would hold them (hex, any length
    from 8 characters)."""
    out = set()
    for name in ("sha256", "sha1", "md5", "blake2b"):
        for text in (secret, f"url\0{secret}", f"url2\0{secret}"):
            out.add(hashlib.new(name, text.encode()).hexdigest()[:8])
    return out


async def test_no_key_tag_log_or_journal_row_holds_the_credential_or_signature(
    emulator: Emulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = os.urandom(30_000)
    async with (
        WireServer(lambda seen: Reply(200, data)) as src,
        client_for(emulator, retry=va.NO_RETRY) as client,
    ):
        netloc = src.url.split("//", 1)[1]
        url = (
            f"http://carol:{PASSWORD}@{netloc}/v.mp4?X-Amz-Credential=AKIAEXAMPLE"
            f"&X-Amz-Signature={SIGNATURE}&sig={SIGNATURE}2&Signature={SIGNATURE}3"
        )
        job = va.UploadJob(url=url, title="t", channel="news")
        journal = tmp_path / "j.sqlite"
        with caplog.at_level(logging.DEBUG, logger="vidapi_async"):
            async with va.BatchUploader(client, journal=journal) as batch:
                [result] = [r async for r in batch.run([job])]
    assert result.status is va.JobStatus.DONE, result.error
    assert stored_bytes(emulator, emulator.videos()[0]["url"]) == data
    with sqlite3.connect(journal) as db:
        rows = repr(db.execute("SELECT * FROM jobs").fetchall())
    [video] = emulator.videos()
    texts = [result.key, repr(result), rows, caplog.text, repr(video["tags"])]
    old_key = hashlib.sha256(f"url\0{url}".encode()).hexdigest()[:24]
    for text in texts:
        for secret in (PASSWORD, SIGNATURE, "AKIAEXAMPLE", "carol", old_key):
            assert secret not in text, (secret, text)
        for secret in (PASSWORD, SIGNATURE, "AKIAEXAMPLE"):
            for digest in _digests(secret):
                assert digest not in text, (secret, text)
    assert video["tags"] == [f"vidapi-{result.key}"]
    assert result.key == _jobs.url_key(url.replace(f"carol:{PASSWORD}@", "").split("?")[0])


@pytest.mark.parametrize("stage", ["done", "creating"])
@pytest.mark.parametrize("given", [False, True], ids=["default", "key-given-as-shared-queues-do"])
async def test_a_journal_keyed_by_the_old_digest_makes_no_second_video(
    emulator: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str, given: bool
) -> None:
    """A shared queue's worker runs each job with its key given (the default key the
    enqueuing host worked out): that key, too, finds the old record."""
    data = os.urandom(20_000)

    def source(seen: Seen) -> Reply:
        return Reply(200, data)

    def old_key(url: str) -> str:  # what the earlier versions computed
        return hashlib.sha256(f"url\0{url}".encode()).hexdigest()[:24]

    async with WireServer(source) as src, client_for(emulator) as client:
        url = f"{src.url}/v.mp4?X-Amz-Signature=first"
        journal = tmp_path / "j.sqlite"
        with monkeypatch.context() as m:
            m.setattr(_disk_checks, "url_key", old_key)
            async with va.BatchUploader(client, journal=journal) as batch:
                [first] = [
                    r async for r in batch.run([va.UploadJob(url=url, title="t", channel="news")])
                ]
        assert first.key == old_key(url)
        if stage == "creating":  # as if killed after the create was sent
            with sqlite3.connect(journal) as db:
                db.execute("UPDATE jobs SET stage = 'creating', video_id = NULL")
        key = _jobs.url_key(url) if given else None
        job = va.UploadJob(url=url, title="t", channel="news", key=key)
        async with va.BatchUploader(client, journal=journal) as batch:
            [again] = [r async for r in batch.run([job])]
    assert again.ok, again.error
    assert again.key == first.key  # resumed under the key its journal row has
    assert again.video_id == first.video_id
    assert len(emulator.videos()) == 1


@pytest.mark.parametrize(
    ("one", "two"),
    [  # a family's names without its signature are the url's own parameters
        ("http://src/get?st=episode-1", "http://src/get?st=episode-2"),
        ("http://src/get?sp=1&se=2", "http://src/get?sp=1&se=3"),
        ("http://src/get?Expires=1", "http://src/get?Expires=2"),
        ("http://src/get?Policy=a&Key-Pair-Id=k", "http://src/get?Policy=b&Key-Pair-Id=k"),
        ("http://src/get?si=a&sig=", "http://src/get?si=b&sig="),  # an empty one: none
    ],
)
def test_unsigned_urls_with_signing_names_keep_their_own_keys(one: str, two: str) -> None:
    assert _jobs.url_key(one) != _jobs.url_key(two)
    assert _jobs.source_identity(one) != _jobs.source_identity(two)


@pytest.mark.parametrize(
    "signed",
    [
        "https://bucket.example/v.mp4?sv=1&Sig=SECRETSIG",  # names in any case
        "https://bucket.example/v.mp4?SIG=SECRETSIG&SE=9&st=x",
        "https://bucket.example/v.mp4?signature=SECRETSIG&expires=4&key-pair-id=K",
        "https://bucket.example/v.mp4?X-amz-credential=SECRETSIG",  # no signature: still
        "https://bucket.example/v.mp4?x-GOOG-credential=SECRETSIG",
        "https://bucket.example/v.mp4?a=1;X-Amz-Signature=SECRETSIG",
        "https://bucket.example/v.mp4?hdnts=exp=1~acl=/*~hmac=SECRETSIG",
    ],
)
def test_credentials_in_any_case_or_separator_are_dropped(signed: str) -> None:
    identity = _jobs.source_identity(signed)
    assert "SECRETSIG" not in identity, identity
    plain = "https://bucket.example/v.mp4" + ("?a=1" if "a=1" in signed else "")
    assert _jobs.url_key(signed) == _jobs.url_key(plain)


async def test_two_unsigned_urls_differing_in_st_are_two_videos(emulator: Emulator) -> None:
    bodies = {"/get?st=episode-1": os.urandom(20_000), "/get?st=episode-2": os.urandom(21_000)}

    def source(seen: Seen) -> Reply:
        return Reply(200, bodies[seen.target])

    async with WireServer(source) as src, client_for(emulator) as client:
        jobs = [va.UploadJob(url=src.url + t, title=t, channel="news") for t in bodies]
        async with va.BatchUploader(client) as batch:
            results = [r async for r in batch.run(jobs)]
    assert sorted(r.status for r in results) == [va.JobStatus.DONE] * 2, results
    stored = sorted(stored_bytes(emulator, v["url"]) for v in emulator.videos())
    assert stored == sorted(bodies.values())
