"""Manifests with odd bytes (issue 29): a CSV that is not UTF-8, control characters in a
key or a title, one key twice. Each is an error naming the file and the line, raised
before any job is started or enqueued; ``encoding=`` (``--encoding``) reads an Excel
Latin-1 export."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from vidapi_async.batch import jobs_from_manifest, jobs_from_source
from vidapi_async.emulator import Emulator

HEADER = "path,title,channel,key,headers,subtitles\n"


def manifest(tmp_path: Path, body: bytes, name: str = "jobs.csv") -> Path:
    make_file(tmp_path / "a.mp4", 1000)
    path = tmp_path / name
    path.write_bytes(HEADER.encode() + body)
    return path


def test_a_latin1_manifest_is_a_named_error_with_its_line(tmp_path: Path) -> None:
    path = manifest(tmp_path, "a.mp4,Caf\u00e9,news,\n".encode("latin-1"))
    with pytest.raises(va.InvalidArgumentError) as caught:
        list(jobs_from_manifest(str(path)))
    text = str(caught.value)
    assert caught.value.argument == "encoding"
    assert f"{path} line 2" in text and "utf-8" in text.lower()


def test_encoding_reads_an_excel_latin1_export(tmp_path: Path) -> None:
    path = manifest(tmp_path, "a.mp4,Caf\u00e9,news,\n".encode("latin-1"))
    (job,) = jobs_from_manifest(str(path), encoding="latin-1")
    assert job.title == "Caf\u00e9"
    (job,) = jobs_from_source(str(path), channel=None, encoding="cp1252")
    assert job.title == "Caf\u00e9"


def test_utf8_with_or_without_a_bom(tmp_path: Path) -> None:
    for name, bom in (("plain.csv", b""), ("bom.csv", b"\xef\xbb\xbf")):
        path = tmp_path / name
        make_file(tmp_path / "a.mp4", 1000)
        path.write_bytes(bom + (HEADER + "a.mp4,Caf\u00e9,news,\n").encode())
        (job,) = jobs_from_manifest(str(path))
        assert job.title == "Caf\u00e9"


def test_an_unknown_encoding_is_refused(tmp_path: Path) -> None:
    path = manifest(tmp_path, b"a.mp4,T,news,\n")
    with pytest.raises(va.InvalidArgumentError, match="encoding"):
        list(jobs_from_manifest(str(path), encoding="no-such-codec"))


@pytest.mark.parametrize(
    ("row", "column"),
    [
        (b"a.mp4,T,news,k\x00ey\n", "key"),
        (b"a.mp4,Ti\x00tle,news,\n", "title"),
        (b"a.mp4,Ti\x07tle,news,\n", "title"),
        (b'a.mp4,"two\nlines",news,\n', "title"),
        (b"a\x00.mp4,T,news,\n", "path"),
        (b"a.mp4,T,news,,VAR\x00IABLE\n", "headers"),
        (b"a.mp4,T,news,,,en=e\x00n.srt\n", "subtitles"),
    ],
    ids=[
        "nul-key",
        "nul-title",
        "bell-title",
        "newline-title",
        "nul-path",
        "nul-headers",
        "nul-subtitles",
    ],
)
def test_control_characters_are_refused_with_file_and_line(
    tmp_path: Path, row: bytes, column: str
) -> None:
    path = manifest(tmp_path, b"a.mp4,fine,news,\n" + row)
    with pytest.raises(va.InvalidArgumentError) as caught:
        list(jobs_from_manifest(str(path)))
    assert caught.value.argument == column
    assert f"{path} line 3" in str(caught.value)


def test_control_characters_in_a_title_are_refused_by_the_job() -> None:
    with pytest.raises(va.InvalidArgumentError, match="title"):
        va.UploadJob(url="https://example.com/a.mp4", title="a\x00b", channel="news")


@pytest.mark.parametrize(
    "rows",
    [
        b"a.mp4,first,news,k1\nb.mp4,second,news,k1\n",
        b"a.mp4,first,news,\na.mp4,second,news,\n",
        b"a.mp4,first,news,\n./a.mp4,first,news,\n",
    ],
    ids=["same-key", "same-path", "same-file"],
)
def test_one_key_twice_is_an_error_naming_both_lines(tmp_path: Path, rows: bytes) -> None:
    path = manifest(tmp_path, rows)
    make_file(tmp_path / "b.mp4", 1000)
    with pytest.raises(va.InvalidArgumentError) as caught:
        list(jobs_from_manifest(str(path)))
    text = str(caught.value)
    assert caught.value.argument == "key"
    assert "line 2" in text and "line 3" in text and str(path) in text


async def test_vidapi_batch_refuses_a_latin1_manifest_then_reads_it_with_encoding(
    tmp_path: Path, emulator: Emulator
) -> None:
    path = manifest(tmp_path, "a.mp4,Caf\u00e9,news,\n".encode("latin-1"))
    journal = str(tmp_path / "j.sqlite")
    env = {"VIDAPI_TOKEN": "t", "VIDAPI_BASE_URL": "http://127.0.0.1:9"}
    code, _, err = await vidapi("batch", str(path), "--journal", journal, env=env)
    assert code == 2, err
    assert "Traceback" not in err and "line 2" in err and "--encoding" in err
    code, _, err = await vidapi(
        "batch", str(path), "--journal", journal, "--encoding", "nope", env=env
    )
    assert code == 2 and "Traceback" not in err and "unknown encoding 'nope'" in err
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    code, _, err = await vidapi(
        "batch", str(path), "--journal", journal, "--encoding", "latin-1", env=env
    )
    assert code == 0, err
    assert [v["title"] for v in emulator.videos()] == ["Caf\u00e9"]


async def test_vidapi_batch_refuses_one_key_twice_before_any_upload(tmp_path: Path) -> None:
    path = manifest(tmp_path, b"a.mp4,first,news,k1\na.mp4,second,news,k1\n")
    journal = tmp_path / "j.sqlite"
    env = {"VIDAPI_TOKEN": "t", "VIDAPI_BASE_URL": "http://127.0.0.1:9"}
    code, _, err = await vidapi("batch", str(path), "--journal", str(journal), env=env)
    assert code == 2, err
    assert "line 2" in err and "line 3" in err
    assert not journal.exists()
