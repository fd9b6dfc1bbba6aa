"""Other tools' exports through --map (Kaltura's bulk-upload CSV, YouTube's bulk
spreadsheet), --list-separator, rows that fail alone (named in the output and the
report, the others going on), JSON Lines subtitles as LANG=FILE strings."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from tests.integration.test_migrate_feed import media_host  # noqa: F401 - the fixture
from vidapi_async.batch import jobs_from_manifest
from vidapi_async.cli._exit import EXIT_JOBS_FAILED
from vidapi_async.emulator import Emulator

KALTURA = """\
# Kaltura bulk upload CSV: lines starting with # are comments
# the first other line starts with * and names the fields
*title,description,tags,url,contentType,conversionProfileId,category,thumbnailUrl
Cats,"A film, about cats","cats,funny",{host}/a.mp4,video,,Pets,{host}/a.jpg
Old,From the FTP days,,ftp://old.example.com/b.mp4,video,,,
# a comment between rows
Dogs,Dogs again,dogs,{host}/b.mp4,video,,Pets,
"""
KALTURA_MAP = {
    "title": "title",
    "description": "description",
    "tags": "tags",
    "url": "url",
    "thumbnail": "thumbnailUrl",
}


def test_a_kaltura_csv_is_read_through_a_map(tmp_path: Path) -> None:
    path = tmp_path / "kaltura.csv"
    path.write_text(KALTURA.format(host="https://media.example.com"), encoding="utf-8")
    left: list[va.LeftOut] = []
    jobs = list(
        jobs_from_manifest(
            path, channel="news", columns=KALTURA_MAP, list_separator=",", left_out=left.append
        )
    )
    assert [(j.title, j.tags, j.thumbnail) for j in jobs] == [
        ("Cats", ("cats", "funny"), "https://media.example.com/a.jpg"),
        ("Dogs", ("dogs",), None),
    ]
    assert jobs[0].description == "A film, about cats"
    assert [(x.where.rsplit("/", 1)[-1], x.status) for x in left] == [
        ("kaltura.csv", "ignored"),
        ("kaltura.csv line 5", "failed"),
        ("kaltura.csv line 6", "skipped"),  # a '#' line after the header: named, not lost
    ]
    assert left[0].reason == "columns not mapped: contentType, conversionProfileId, category"
    assert "ftp://" in left[1].reason and "url" in left[1].reason
    with pytest.raises(va.InvalidArgumentError, match=r"kaltura\.csv line 5: url"):
        list(jobs_from_manifest(path, channel="news", columns=KALTURA_MAP, list_separator=","))


def test_kalturas_older_hash_header_is_the_header_a_map_names(tmp_path: Path) -> None:
    """Kaltura's older bulk CSV names its fields on a '#' line (``#Name,Description,
    Tags,URL,...``), the form issue 39 names: with a map whose columns are all on the
    first '#' line, that line is the header (the fresh user's look: it was read as a
    comment, and the first row taken for the header)."""
    path = tmp_path / "kaltura-old.csv"
    path.write_text(
        "#Name,Description,Tags,URL,ContentType\n"
        'Harbour,"Shot at dawn, 2019","boats,harbour",https://media.example.com/h.mp4,Video\n'
        "# a comment between rows\n"
        "Dusk,,,https://media.example.com/d.mp4,Video\n",
        encoding="utf-8",
    )
    mapping = {"title": "Name", "description": "Description", "tags": "Tags", "url": "URL"}
    left: list[va.LeftOut] = []
    jobs = list(
        jobs_from_manifest(
            path, channel="news", columns=mapping, list_separator=",", left_out=left.append
        )
    )
    assert [(j.title, j.tags, j.url) for j in jobs] == [
        ("Harbour", ("boats", "harbour"), "https://media.example.com/h.mp4"),
        ("Dusk", None, "https://media.example.com/d.mp4"),
    ]
    assert jobs[0].description == "Shot at dawn, 2019"
    assert [(x.where.rsplit("/", 1)[-1], x.status) for x in left] == [
        ("kaltura-old.csv", "ignored"),
        ("kaltura-old.csv line 3", "skipped"),
    ]
    # without a map, a '#' line is a comment as before
    plain = tmp_path / "plain.csv"
    plain.write_text("# my notes\npath,title\na.mp4,A\n", encoding="utf-8")
    make_file(tmp_path / "a.mp4", 10)
    assert [j.title for j in jobs_from_manifest(plain, channel="news")] == ["A"]


def test_a_row_after_a_kaltura_header_whose_first_cell_starts_with_hash_is_reported(
    tmp_path: Path,
) -> None:
    """The review of issue 38/39: ``#MeToo stories,a.mp4`` after a ``*`` header was read
    as a comment, dropped without a word. It is reported with its line (the output, the
    report, the counts); quoted, its first cell is a row's."""
    path = tmp_path / "kaltura.csv"
    path.write_text(
        "# a comment\n*title,url\n#MeToo stories,http://h.example/a.mp4\n"
        '"#MeToo again",http://h.example/b.mp4\n',
        encoding="utf-8",
    )
    left: list[va.LeftOut] = []
    columns = {"title": "title", "url": "url"}
    jobs = list(jobs_from_manifest(path, channel="news", columns=columns, left_out=left.append))
    assert [j.title for j in jobs] == ["#MeToo again"]
    [dropped] = left
    assert dropped.where.endswith("kaltura.csv line 3") and dropped.status == "skipped"
    assert "#" in dropped.reason and "comment" in dropped.reason


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"title": "Name"}, r"--map names column\(s\) the file lacks: 'Name'"),
        ({"name": "title", "url": "url"}, r"--map name=title: no field 'name'"),
        ({"title": "title"}, r"needs a header row with a 'path' or 'url' column"),
    ],
)
def test_a_map_that_does_not_fit_the_file_is_refused_before_any_row(
    tmp_path: Path, columns: dict[str, str], message: str
) -> None:
    path = tmp_path / "kaltura.csv"
    path.write_text(KALTURA.format(host="https://media.example.com"), encoding="utf-8")
    with pytest.raises(va.UsageError, match=message):
        next(jobs_from_manifest(path, channel="news", columns=columns))


def test_a_youtube_spreadsheet_reads_its_lists_and_not_its_channel(tmp_path: Path) -> None:
    make_file(tmp_path / "clip.mov", 100)
    path = tmp_path / "videos.csv"
    path.write_text(
        "filename,channel,custom_id,title,description,keywords,spoken_language,privacy\n"
        "clip.mov,UCxyz,CUST-1,A clip,Its text,one|two|three,fr,public\n",
        encoding="utf-8",
    )
    columns = {"path": "filename", "key": "custom_id", "title": "title", "tags": "keywords"}
    columns["language"] = "spoken_language"
    [job] = jobs_from_manifest(path, channel="news", columns=columns, list_separator="|")
    assert (job.key, job.title, job.tags, job.language, job.channel) == (
        "CUST-1", "A clip", ("one", "two", "three"), "fr", "news",
    )  # fmt: skip


def test_json_lines_subtitles_as_lang_file_strings(tmp_path: Path) -> None:
    path = tmp_path / "jobs.jsonl"
    path.write_text(
        json.dumps(
            {
                "url": "https://x.test/a.mp4",
                "subtitles": ["en=subs/en.srt", "fr=https://x.test/f.srt"],
            }
        )
        + "\n"
        + json.dumps({"url": "https://x.test/b.mp4", "subtitles": ["en"]})
        + "\n",
        encoding="utf-8",
    )
    left: list[va.LeftOut] = []
    [job] = jobs_from_manifest(path, channel="news", left_out=left.append)
    assert [(s.language, s.path, s.url) for s in job.subtitles] == [
        ("en", str(tmp_path / "subs" / "en.srt"), None),
        ("fr", None, "https://x.test/f.srt"),
    ]
    assert [(x.where.rsplit("/", 1)[-1], x.status) for x in left] == [
        ("jobs.jsonl line 2", "failed")
    ]
    assert "LANG=FILE" in left[0].reason


async def test_the_command_line_migrates_a_kaltura_csv_and_fails_its_bad_row_alone(
    emulator: Emulator,
    tmp_path: Path,
    media_host: str,  # noqa: F811
) -> None:
    path = tmp_path / "kaltura.csv"
    path.write_text(KALTURA.format(host=media_host), encoding="utf-8")
    report = tmp_path / "report.csv"
    env = {"VIDAPI_TOKEN": emulator.token, "VIDAPI_BASE_URL": emulator.base_url}
    mapping = [a for field, col in KALTURA_MAP.items() for a in ("--map", f"{field}={col}")]
    common = ("batch", str(path), "--channel", "news", "--journal", str(tmp_path / "j.sqlite"))
    code, out, err = await vidapi(*common, *mapping, "--list-separator", ",", "--dry-run", env=env)
    assert code == EXIT_JOBS_FAILED, err  # as the run exits: a row would fail (issue 38 #4)
    assert "create " in out and ": Cats (" in out and ": Dogs (" in out, out
    assert "kaltura.csv line 5: url" in out and "would create 2" in out, out
    code, out, err = await vidapi(
        *common, *mapping, "--list-separator", ",", "--dry-run", "--json", env=env
    )
    assert code == EXIT_JOBS_FAILED, err
    assert [e["status"] for e in json.loads(out)["left_out"]].count("failed") == 1, out
    code, out, err = await vidapi(
        *common, *mapping, "--list-separator", ",", "--report", str(report), env=env
    )
    assert code == EXIT_JOBS_FAILED, (out, err)  # a row failed; the others were migrated
    videos = {v["title"]: v for v in emulator.videos()}
    assert set(videos) == {"Cats", "Dogs"}, err
    assert videos["Cats"]["tags"][:2] == ["cats", "funny"]
    assert videos["Cats"]["description"] == "A film, about cats"
    assert err.count("columns not mapped: contentType, conversionProfileId, category") == 1, err
    assert "kaltura.csv line 5: url" in err, err
    with report.open(newline="") as f:
        rows = {r["source"].rsplit("/", 1)[-1]: r for r in csv.DictReader(f)}
    assert rows["kaltura.csv line 5"]["status"] == "failed"
    assert "ftp://" in rows["kaltura.csv line 5"]["error"]
    assert sorted(r["status"] for r in rows.values()) == ["done", "done", "failed", "skipped"]
