"""Issue 38, third attack F5: a done shared-queue job's spec keeps no url credential
(``user:password@``, a signature in the query) for its video, thumbnail or subtitles,
as its video password is cleared; a re-enqueue of the same job is still unchanged."""

from __future__ import annotations

import json

import vidapi_async as va
from vidapi_async.batch._enqueue import as_stored, cleared, job_of, spec_of

SIGNED = "https://u:PW1@media.example.com/a.mp4?id=7&X-Amz-Signature=SIG1&X-Amz-Date=1"
THUMB = "https://cdn.example.com/t.jpg?sig=SIG2&se=2030-01-01&sv=1"
SUB = "https://u:PW3@subs.example.com/en.srt"


def _job(url: str = SIGNED) -> va.UploadJob:
    return va.UploadJob(
        url=url, title="t", channel="news", key="k", thumbnail=THUMB,
        subtitles=[va.SubtitleSpec("en", url=SUB)],
    )  # fmt: skip


def test_a_done_specs_urls_keep_no_credential() -> None:
    spec = json.dumps(spec_of(_job()))
    done = cleared(spec)
    assert done is not None
    for secret in ("PW1", "SIG1", "SIG2", "PW3", "u:"):
        assert secret not in done, (secret, done)
    kept = json.loads(done)
    assert kept["url"] == "https://media.example.com/a.mp4?id=7"
    assert kept["thumbnail"].startswith("https://cdn.example.com/t.jpg")
    assert kept["subtitles"][0]["url"] == "https://subs.example.com/en.srt"
    assert job_of(kept).url == "https://media.example.com/a.mp4?id=7"  # still a job


def test_a_re_enqueue_of_a_cleared_job_is_unchanged_and_a_moved_one_is_not() -> None:
    old = json.loads(cleared(json.dumps(spec_of(_job()))) or "")
    assert as_stored(old, spec_of(_job())) == old
    renewed = SIGNED.replace("SIG1", "SIG9")
    assert as_stored(old, spec_of(_job(renewed))) == old
    moved = "https://media.example.com/b.mp4?id=7"
    assert as_stored(old, spec_of(_job(moved))) != old


def test_a_spec_with_nothing_to_clear_is_left_as_it_is() -> None:
    plain = va.UploadJob(url="https://media.example.com/a.mp4?id=7", title="t", channel="n")
    assert cleared(json.dumps(spec_of(plain))) is None
