"""A shared queue's spec keeps the manifest or feed its job was enqueued from (issue 40,
round three): a spec of an earlier release (none) still reads, and compares equal to the
same job enqueued again with one."""

from __future__ import annotations

import json
from pathlib import Path

import vidapi_async as va
from vidapi_async.batch._enqueue import BATCH_ORIGIN, as_stored, job_of, origin_in, spec_of


def test_a_spec_carries_its_origin_and_an_old_one_none(tmp_path: Path) -> None:
    job = va.UploadJob(path=tmp_path / "a.mp4", title="T", channel="news", key="k")
    new = json.loads(json.dumps(spec_of(job, "/lib/m.csv")))
    old = json.loads(json.dumps(spec_of(job)))
    assert BATCH_ORIGIN not in old
    assert (origin_in(new), origin_in(old)) == ("/lib/m.csv", None)
    assert job_of(new) == job_of(old)  # the job itself is the same
    assert as_stored(old, new) == old  # enqueued again over an earlier release's: unchanged
    assert as_stored(new, spec_of(job, "/other/m.csv")) != new  # another origin: a change
