"""Reading a manifest never ends in a traceback: CR-only line ends, a huge cell, an
encoding that is not a text encoding or that makes lone surrogates, the same url
signed twice; and a long line is read in linear time, up to a bound."""

from __future__ import annotations

from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async.batch import jobs_from_folder, jobs_from_manifest, jobs_from_source


def _manifest(tmp_path: Path, body: bytes) -> str:
    make_file(tmp_path / "a.mp4", 1000)
    path = tmp_path / "jobs.csv"
    path.write_bytes(body)
    return str(path)


def _refused(path: str, **kwargs: str) -> va.VidapiError:
    with pytest.raises((va.InvalidArgumentError, va.UsageError)) as caught:
        list(jobs_from_manifest(path, channel="news", **kwargs))
    assert path in str(caught.value)
    return caught.value


def test_cr_only_line_ends_are_a_named_error(tmp_path: Path) -> None:
    path = _manifest(tmp_path, b"path,title\ra.mp4,one\ra.mp4,two\r")
    _refused(path)


def test_a_cell_over_csvs_limit_is_a_named_error(tmp_path: Path) -> None:
    path = _manifest(tmp_path, b'path,title\na.mp4,"' + b"x" * 200_000 + b'"\n')
    assert "line 2" in str(_refused(path))


def test_a_line_too_long_is_a_named_error(tmp_path: Path) -> None:
    path = _manifest(tmp_path, b"path,title\na.mp4," + b"x" * (3 << 20) + b"\n")
    assert "line 2" in str(_refused(path))


@pytest.mark.parametrize("encoding", ["rot13", "hex", "base64", "zlib"])
def test_an_encoding_that_is_not_text_is_refused(tmp_path: Path, encoding: str) -> None:
    path = _manifest(tmp_path, b"path,title\na.mp4,one\n")
    with pytest.raises(va.InvalidArgumentError) as caught:
        list(jobs_from_manifest(path, channel="news", encoding=encoding))
    assert caught.value.argument == "encoding"


@pytest.mark.parametrize(
    ("encoding", "cell"), [("utf-7", b"+2AA-"), ("unicode_escape", b"\\ud800")]
)
def test_an_encoding_making_lone_surrogates_is_a_named_error(
    tmp_path: Path, encoding: str, cell: bytes
) -> None:
    path = _manifest(tmp_path, b"path,title\na.mp4,t" + cell + b"\n")
    assert "line 2" in str(_refused(path, encoding=encoding))


def test_the_same_url_signed_twice_is_one_job_twice(tmp_path: Path) -> None:
    one = "https://bucket.example.com/v.mp4?X-Amz-Signature=aaa&X-Amz-Credential=c1"
    two = "https://bucket.example.com/v.mp4?X-Amz-Signature=bbb&X-Amz-Credential=c2"
    path = _manifest(tmp_path, f"url,title\n{one},one\n{two},two\n".encode())
    error = _refused(path)
    assert "the same job twice" in str(error)
    assert "aaa" not in str(error) and "bbb" not in str(error)


def test_a_long_line_is_read(tmp_path: Path) -> None:
    title = "y" * 100_000
    path = _manifest(tmp_path, f"path,title\na.mp4,{title}\na.mp4,t\n".encode())
    with pytest.raises(va.InvalidArgumentError) as caught:  # read whole, then judged
        list(jobs_from_manifest(path, channel="news"))
    message = str(caught.value)  # over the title's limit, named with its line
    assert "line 2" in message and "100000 characters" in message


def test_a_column_named_twice_is_refused(tmp_path: Path) -> None:
    path = _manifest(tmp_path, b"path,title,title\na.mp4,one,two\n")
    assert "title" in str(_refused(path))


def test_a_jsonl_key_twice_in_one_row_is_refused(tmp_path: Path) -> None:
    make_file(tmp_path / "a.mp4", 1000)
    path = tmp_path / "jobs.jsonl"
    path.write_text('{"path": "a.mp4", "title": "x", "channel": "news", "title": "y"}\n')
    with pytest.raises(va.InvalidArgumentError) as caught:
        list(jobs_from_manifest(str(path)))
    assert f"{path} line 1" in str(caught.value)
    assert "'title' twice" in str(caught.value)


def test_manifests_feeds_and_folders_are_named_by_a_path_object_too(tmp_path: Path) -> None:
    (tmp_path / "v").mkdir()
    make_file(tmp_path / "v" / "a.mp4", 1000)
    (tmp_path / "jobs.csv").write_text("path,title,channel\nv/a.mp4,x,news\n")
    (tmp_path / "jobs.jsonl").write_text('{"path": "v/a.mp4", "title": "x", "channel": "news"}\n')
    expected = [str(tmp_path / "v" / "a.mp4")]
    for path in (tmp_path / "jobs.csv", tmp_path / "jobs.jsonl"):
        assert [j.path for j in jobs_from_manifest(path)] == expected
        assert [j.path for j in jobs_from_source(path, channel=None)] == expected
    assert [j.path for j in jobs_from_folder(tmp_path / "v", channel="news")] == expected
    assert [j.path for j in jobs_from_source(tmp_path / "v", channel="news")] == expected


# --- the review of issue 38/39: one over-long value fails its row alone -------------------


def test_a_csv_cell_over_csvs_limit_fails_its_row_alone(tmp_path: Path) -> None:
    """A cell over csv's 128 KiB stopped the whole run: on a row of one line whose quotes
    close, the reader goes on at the next line, so the row fails alone, named."""
    path = tmp_path / "m.csv"
    huge = "d" * (200 << 10)
    path.write_text(
        "url,title,description\n"
        "http://h.example/a.mp4,a,fine\n"
        f'http://h.example/b.mp4,b,"{huge}"\n'
        f"http://h.example/c.mp4,c,{huge}\n"
        "http://h.example/d.mp4,d,fine\n",
        encoding="utf-8",
    )
    left: list[va.LeftOut] = []
    jobs = list(jobs_from_manifest(path, channel="news", left_out=left.append))
    assert [j.title for j in jobs] == ["a", "d"]
    assert [(x.where.rsplit("/", 1)[-1], x.status) for x in left] == [
        ("m.csv line 3", "failed"),
        ("m.csv line 4", "failed"),
    ]
    assert all("larger than" in x.reason for x in left), left


def test_a_jsonl_line_over_the_line_limit_fails_alone(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    row = '{{"url": "http://h.example/{n}.mp4", "title": "{n}", "description": "{d}"}}\n'
    path.write_text(
        row.format(n="a", d="x") + row.format(n="b", d="y" * (3 << 20)) + row.format(n="c", d="z"),
        encoding="utf-8",
    )
    left: list[va.LeftOut] = []
    jobs = list(jobs_from_manifest(path, channel="news", left_out=left.append))
    assert [j.title for j in jobs] == ["a", "c"]
    [failed] = left
    assert failed.where.endswith("m.jsonl line 2") and failed.status == "failed"
    assert "longer than" in failed.reason


def test_a_multi_line_quoted_cell_over_the_limit_still_stops_the_file(tmp_path: Path) -> None:
    """Where the reader cannot tell the next row's start (a quoted cell left open over
    several lines), the file stops with its line, as before."""
    path = tmp_path / "m.csv"
    huge = "d" * (200 << 10)
    path.write_text(
        f'url,title,description\nhttp://h.example/b.mp4,b,"two\n{huge}"\n', encoding="utf-8"
    )
    with pytest.raises(va.InvalidArgumentError, match=r"m\.csv line 2: not a CSV row"):
        list(jobs_from_manifest(path, channel="news", left_out=lambda _: None))


def test_a_folder_leaves_out_files_whose_type_is_known_and_not_video(tmp_path: Path) -> None:
    """The fresh user's look: a folder took ``cover.jpg`` and ``notes.log`` as videos
    (only ``.xml`` and a few others were left out), where a bucket judges each object by
    its type. A video extension is a video; a file whose extension the system's table
    of types names as something else (an image, text, a document, audio) is left out
    with its type; one of no extension or an unknown one is tried, as before."""
    from vidapi_async.batch._manifest import folder_entries

    for name in ("a.mp4", "b.MKV", "c.ts", "cover.jpg", "notes.log", "doc.pdf", "song.mp3"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "raw-take").write_bytes(b"x")  # no extension: tried
    (tmp_path / "odd.zzq").write_bytes(b"x")  # an extension no table knows: tried
    videos, skipped = folder_entries(str(tmp_path))
    assert videos == ["a.mp4", "b.MKV", "c.ts", "odd.zzq", "raw-take"]
    why = dict(skipped)
    assert set(why) == {"cover.jpg", "doc.pdf", "notes.log", "song.mp3"}
    assert why["cover.jpg"] == "not a video (a .jpg file, image/jpeg)"
    assert why["song.mp3"].startswith("not a video (a .mp3 file, audio/")


def test_a_bad_row_keeps_its_key_where_it_has_one(tmp_path: Path) -> None:
    """The fresh user's look: a done row made malformed (a cell too many) lost its key
    in the report (an empty key cell, so the key -> video map lost that row), and the
    reason blamed ``path``. The row's key, where its key cell is readable, is kept."""
    path = tmp_path / "m.csv"
    path.write_text(
        "key,path,title,channel\n"
        "k01,a.mp4,Fine,news\n"
        "k07,b.mp4,Has, a comma,news\n"
        "k08,c.mp4,Bad date,news\n",
        encoding="utf-8",
    )
    left: list[va.LeftOut] = []
    list(jobs_from_manifest(path, channel="news", left_out=left.append))
    [bad] = left
    assert bad.key == "k07"
    assert bad.reason.startswith("row: more cells than the header has"), bad.reason
    lines = tmp_path / "m.jsonl"
    lines.write_text(
        '{"key": "j1", "path": "a.mp4", "title": "T", "channel": "news", "published": 3}\n',
        encoding="utf-8",
    )
    left.clear()
    list(jobs_from_manifest(lines, channel="news", left_out=left.append))
    assert [entry.key for entry in left] == ["j1"]


def test_an_unknown_column_is_named_on_the_header_line_after_comments(tmp_path: Path) -> None:
    """The fresh user's look: the header after two comment lines was called line 1."""
    path = tmp_path / "c.csv"
    path.write_text("# c\n# c\nkey,path,title,channel,titel\n", encoding="utf-8")
    with pytest.raises(va.UsageError, match=r"c\.csv line 3: unknown column\(s\) 'titel'"):
        list(jobs_from_manifest(path, channel="news"))
