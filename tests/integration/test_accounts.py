"""Many accounts in one manifest (issue 41): a row's ``account`` names the environment
variable holding its account's token, ``profile`` (API v2) its profile; each account is
paced in its own quota window, in parallel; the token is never printed nor stored."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import vidapi_async as va
from tests.cli_run import vidapi
from tests.conftest import make_file
from vidapi_async.batch import LeftOut, jobs_from_manifest
from vidapi_async.batch._accounts import in_turn
from vidapi_async.batch._manifest import manifest_entries
from vidapi_async.emulator import ALL_SCOPES, OTHER_TOKEN, Emulator
from vidapi_async.testing import client_for

OWN = "own-Secret-7f3a9c"  # the client's token (the user demo's)
TOKEN_B = OTHER_TOKEN  # the user other's


def manifest(tmp_path: Path, rows: list[tuple[str, str]]) -> Path:
    """A CSV manifest of (file name, account variable) rows, its files made."""
    lines = ["path,title,channel,account"]
    for name, account in rows:
        make_file(tmp_path / name, 1500 + len(lines))
        lines.append(f"{name},{name},news,{account}")
    path = tmp_path / "library.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


REVOKED = "revoked-Secret-51c2"  # a token the platform does not know


def account_then_own(tmp_path: Path, account: str, titles: list[str]) -> list[va.UploadJob]:
    """A job per title, each with its file: the first under ``account``, the others
    under the client's own account."""
    return [
        va.UploadJob(
            path=make_file(tmp_path / f"{title}.mp4", 900 + n),
            title=title,
            channel="news",
            account=account if n == 0 else None,
        )
        for n, title in enumerate(titles)
    ]


def owners(emu: Emulator) -> dict[str, str]:
    """Each video's title -> its owner's user name."""
    names = {account.id: name for name, account in emu.backend.accounts.items()}
    return {v["title"]: names[v["owner"]] for v in emu.videos()}


async def test_each_row_is_created_by_its_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("VIDAPI_ACCOUNT_B_TOKEN", TOKEN_B)
    rows = [
        ("a1.mp4", ""),
        ("b1.mp4", "VIDAPI_ACCOUNT_B_TOKEN"),
        ("a2.mp4", ""),
        ("b2.mp4", "VIDAPI_ACCOUNT_B_TOKEN"),
    ]
    source = manifest(tmp_path, rows)
    journal, report = tmp_path / "j.sqlite", tmp_path / "map.csv"
    caplog.set_level(logging.DEBUG)
    async with (
        Emulator(tokens={OWN: ALL_SCOPES}, probe=False) as emu,
        client_for(emu) as client,
    ):
        async with va.BatchUploader(client, journal=journal, report=report) as batch:
            results = [r async for r in batch.run(jobs_from_manifest(source))]
        assert [r.status for r in results] == [va.JobStatus.DONE] * 4
        assert owners(emu) == {
            "a1.mp4": "demo",
            "a2.mp4": "demo",
            "b1.mp4": "other",
            "b2.mp4": "other",
        }
        # a re-run finds each done (its account's video, by its account)
        async with va.BatchUploader(client, journal=journal) as batch:
            again = [r async for r in batch.run(jobs_from_manifest(source))]
        assert {r.status for r in again} == {va.JobStatus.SKIPPED}
    for where in (journal.read_bytes(), report.read_bytes(), caplog.text.encode()):
        assert TOKEN_B.encode() not in where
        assert OWN.encode() not in where
    assert TOKEN_B not in repr(results[1].job) and TOKEN_B not in repr(results)


async def test_two_accounts_are_paced_in_parallel_each_in_its_own_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDAPI_ACCOUNT_B_TOKEN", TOKEN_B)
    files = [make_file(tmp_path / f"v{i}.mp4", 1200 + i) for i in range(12)]
    jobs = [  # one account's rows, then the other's: the batch takes them in turn
        va.UploadJob(path=f, title=f"{'A' if i < 6 else 'B'}{i}", channel="news",
                     account=None if i < 6 else "VIDAPI_ACCOUNT_B_TOKEN")
        for i, f in enumerate(files)
    ]  # fmt: skip
    async with Emulator(quota="3/0.5s", probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, concurrency=4, quota="3/0.5s") as batch:
            results = [r async for r in batch.run(jobs)]
        assert sorted(r.status.value for r in results) == ["done"] * 12
        creates = [r for r in emu.requests if r.method == "POST" and r.path == "/me/videos"]
        assert len(creates) == 12  # no refusal: each account paced to its own window
        rows = emu.state._db.execute(
            "select json_extract(data, '$.title') from objects where kind = 'video' "
            "order by created"
        ).fetchall()
        by_owner = owners(emu)
    order = [str(title)[0] for (title,) in rows]
    # B's first video came before A's fourth: B did not wait for A's window
    assert order.index("B") < [i for i, o in enumerate(order) if o == "A"][3]
    assert {by_owner[t] for t in by_owner if t.startswith("A")} == {"demo"}
    assert {by_owner[t] for t in by_owner if t.startswith("B")} == {"other"}


async def test_the_command_runs_two_accounts_and_never_shows_a_token(tmp_path: Path) -> None:
    source = manifest(
        tmp_path,
        [("a.mp4", ""), ("b.mp4", "VIDAPI_ACCOUNT_B_TOKEN"), ("c.mp4", "VIDAPI_ACCOUNT_B_TOKEN")],
    )
    journal, report = tmp_path / "j.sqlite", tmp_path / "map.jsonl"
    async with Emulator(tokens={OWN: ALL_SCOPES}, probe=False) as emu:
        env = {
            "VIDAPI_TOKEN": OWN,
            "VIDAPI_BASE_URL": emu.base_url,
            "VIDAPI_ACCOUNT_B_TOKEN": TOKEN_B,
        }
        code, out, err = await vidapi(
            "batch", str(source), "--journal", str(journal), "--report", str(report),
            "--quota", "2/0.5s", env=env,
        )  # fmt: skip
        assert code == 0, err
        assert owners(emu) == {"a.mp4": "demo", "b.mp4": "other", "c.mp4": "other"}
    for where in (out, err, journal.read_text("latin-1"), report.read_text()):
        assert TOKEN_B not in where and OWN not in where


def test_an_unset_variable_is_named_never_a_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIDAPI_NO_SUCH_TOKEN", raising=False)
    source = manifest(tmp_path, [("a.mp4", "VIDAPI_NO_SUCH_TOKEN")])
    with pytest.raises(va.InvalidArgumentError, match="VIDAPI_NO_SUCH_TOKEN is not set") as info:
        list(jobs_from_manifest(source))
    assert "line 2" in str(info.value)


async def test_a_job_whose_variable_is_gone_when_it_runs_fails_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIDAPI_GONE_TOKEN", raising=False)
    jobs = account_then_own(tmp_path, "VIDAPI_GONE_TOKEN", ["a", "b"])
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, journal=journal) as batch:
            results = {r.job.title: r async for r in batch.run(jobs)}
    assert results["a"].status is va.JobStatus.FAILED
    assert isinstance(results["a"].error, va.AccountNotSetError)
    assert results["a"].error.variable == "VIDAPI_GONE_TOKEN"
    assert "VIDAPI_GONE_TOKEN is not set" in str(results["a"].error)
    assert results["b"].status is va.JobStatus.DONE
    # recorded failed, so that vidapi status sees it (and a re-run tries it again)
    errors = [r.error for r in va.SQLiteJournal(journal).records_sync() if r.error]
    assert len(errors) == 1 and "VIDAPI_GONE_TOKEN is not set" in errors[0]


@pytest.mark.parametrize(
    ("fields", "argument"),
    [
        ({"account": "not a name"}, "account"),
        ({"account": "1ST"}, "account"),
        ({"account": "PATH"}, "account"),
        ({"account": "news_token"}, "account"),
        ({"profile": " "}, "profile"),
        ({"profile": "a\nb"}, "profile"),
        ({"account": "VIDAPI_ACCOUNT_B_TOKEN", "playlists": ["Best of"]}, "playlists"),
    ],
)
def test_a_bad_account_or_profile_is_refused_when_the_job_is_built(
    fields: dict[str, object], argument: str
) -> None:
    with pytest.raises(va.InvalidArgumentError) as info:
        va.UploadJob(url="https://example.com/v.mp4", title="t", channel="news", **fields)  # type: ignore[arg-type]
    assert info.value.argument == argument


async def test_accounts_are_taken_in_turn_each_in_its_order() -> None:
    def job(n: int, account: str | None) -> va.UploadJob:
        return va.UploadJob(url=f"https://example.com/{n}.mp4", title=str(n), channel="news",
                            account=account)  # fmt: skip

    async def source() -> object:
        for n in range(4):
            yield job(n, None)
        for n in range(4, 7):
            yield job(n, "VIDAPI_B_TOKEN")

    taken = [j.title async for j in in_turn(source())]  # type: ignore[arg-type]
    assert taken == ["0", "4", "1", "5", "2", "6", "3"]
    taken = [j.title async for j in in_turn(source(), lookahead=2)]  # type: ignore[arg-type]
    assert sorted(taken, key=int) == [str(n) for n in range(7)]


async def test_a_v2_row_is_created_under_its_profile(tmp_path: Path) -> None:
    async with Emulator(probe=False) as emu:
        emu.add_profile("second", name="Second channel")
        jobs = [
            va.UploadJob(path=make_file(tmp_path / "a.mp4", 800), title="a", channel="news",
                         profile="second"),
            va.UploadJob(path=make_file(tmp_path / "b.mp4", 801), title="b", channel="news"),
        ]  # fmt: skip
        demo = emu.backend.accounts["demo"].id
        async with client_for(emu, api="v2", profile_id=demo) as client:
            async with va.BatchUploader(client) as batch:
                results = [r async for r in batch.run(jobs)]
        assert [r.status for r in results] == [va.JobStatus.DONE] * 2
        profiles = {v["title"]: v.get("profile", v["owner"]) for v in emu.videos()}
        assert profiles == {"a": "second", "b": demo}


@pytest.mark.parametrize("first", ["", "VIDAPI_ACCOUNT_B_TOKEN"])
async def test_a_new_journal_adopts_each_accounts_videos_by_its_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: str
) -> None:
    """The fresh user's look at issues 40/41: adoption listed one account's videos (the
    first job's) and compared every owner with that account: with a new journal the
    other account's rows were uploaded again (duplicates), whichever came first."""
    monkeypatch.setenv("VIDAPI_ACCOUNT_B_TOKEN", TOKEN_B)
    other = "VIDAPI_ACCOUNT_B_TOKEN" if first == "" else ""
    rows = [("a1.mp4", first), ("b1.mp4", other), ("a2.mp4", first), ("b2.mp4", other)]
    source = manifest(tmp_path, rows)
    async with (
        Emulator(tokens={OWN: ALL_SCOPES}, probe=False) as emu,
        client_for(emu) as client,
    ):
        async with va.BatchUploader(client, journal=tmp_path / "one.sqlite") as batch:
            assert {r.status async for r in batch.run(jobs_from_manifest(source))} == {
                va.JobStatus.DONE
            }
        made = owners(emu)
        async with va.BatchUploader(client, journal=tmp_path / "two.sqlite") as batch:
            plan = await batch.plan(jobs_from_manifest(source))
            again = [r async for r in batch.run(jobs_from_manifest(source))]
        assert sorted(plan.adopt) == sorted(r.key for r in again)
        assert {r.status for r in again} == {va.JobStatus.ADOPTED}
        assert owners(emu) == made  # no video made twice, each still its account's


@pytest.mark.parametrize(
    "variable",
    [
        "PATH",
        "HOME",
        "AWS_SECRET_ACCESS_KEY",
        # other secrets named *_TOKEN: only VIDAPI_<NAME>_TOKEN may be an account's
        "AWS_SESSION_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "CI_JOB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "NPM_TOKEN",
        "VIDAPI_TOKEN",
        "VIDAPI__TOKEN",
        "XVIDAPI_NEWS_TOKEN",
    ],
)
def test_an_account_naming_a_variable_that_is_no_token_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    secret = "s3cr3t-value-of-the-variable"
    monkeypatch.setenv(variable, secret)
    source = manifest(tmp_path, [("a.mp4", variable), ("b.mp4", "")])
    entries = list(manifest_entries(source))
    refused, kept = entries
    assert isinstance(refused, LeftOut) and refused.argument == "account"
    assert "VIDAPI_<NAME>_TOKEN" in refused.reason and secret not in refused.reason
    assert isinstance(kept, va.UploadJob) and kept.account is None
    with pytest.raises(va.InvalidArgumentError, match="line 2") as info:
        list(jobs_from_manifest(source))
    assert info.value.argument == "account" and secret not in str(info.value)
    with pytest.raises(va.AccountError) as refused:  # the job itself, its own type
        va.UploadJob(url="https://example.com/v.mp4", title="t", channel="n", account=variable)
    assert refused.value.variable is None and secret not in str(refused.value)


@pytest.mark.parametrize("text", ["not a name; $(id)", "<b>X</b>", "A" * 300 + "_TOKEN"])
def test_an_account_that_is_no_name_is_refused_without_echoing_it(
    tmp_path: Path, text: str
) -> None:
    source = manifest(tmp_path, [("a.mp4", text)])
    with pytest.raises(va.InvalidArgumentError) as info:
        list(jobs_from_manifest(source))
    assert info.value.argument == "account"
    assert text not in str(info.value) and "line 2" in str(info.value)


@pytest.mark.parametrize(
    ("before", "after"), [("", "VIDAPI_ACCOUNT_B_TOKEN"), ("VIDAPI_ACCOUNT_B_TOKEN", "")]
)
async def test_a_done_row_moved_to_another_account_is_refused_not_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    monkeypatch.setenv("VIDAPI_ACCOUNT_B_TOKEN", TOKEN_B)
    journal = tmp_path / "j.sqlite"
    async with (
        Emulator(tokens={OWN: ALL_SCOPES}, probe=False) as emu,
        client_for(emu) as client,
    ):
        async with va.BatchUploader(client, journal=journal) as batch:
            [first] = [
                r
                async for r in batch.run(
                    jobs_from_manifest(manifest(tmp_path, [("a.mp4", before)]))
                )
            ]
        assert first.status is va.JobStatus.DONE
        moved = tmp_path / "library.csv"  # the same file, the row's account changed
        moved.write_text(f"path,title,channel,account\na.mp4,a.mp4,news,{after}\n")
        async with va.BatchUploader(client, journal=journal) as batch:
            plan = await batch.plan(jobs_from_manifest(moved))
            [again] = [r async for r in batch.run(jobs_from_manifest(moved))]
        assert plan.refuse == (first.key,) and not plan.update and not plan.skip, plan
        assert again.status is va.JobStatus.FAILED
        assert isinstance(again.error, va.AccountError)
        said = str(again.error)
        assert (before or "the client's own") in said and (after or "the client's own") in said
        assert "not supported" in said and TOKEN_B not in said and OWN not in said
        assert len(emu.videos()) == 1  # nothing made, nothing sent to the video


def one_account_two_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[va.UploadJob]:
    """Four jobs of one account (``TOKEN_B``) whose rows name it by two variables in
    turn, ``VIDAPI_NEWS_TOKEN`` and ``VIDAPI_SPORT_TOKEN``."""
    monkeypatch.setenv("VIDAPI_NEWS_TOKEN", TOKEN_B)
    monkeypatch.setenv("VIDAPI_SPORT_TOKEN", TOKEN_B)  # the same account under two names
    files = [make_file(tmp_path / f"s{i}.mp4", 1300 + i) for i in range(4)]
    return [
        va.UploadJob(path=f, title=f"t{i}", channel="news",
                     account="VIDAPI_NEWS_TOKEN" if i % 2 else "VIDAPI_SPORT_TOKEN")
        for i, f in enumerate(files)
    ]  # fmt: skip


async def test_two_variables_holding_one_token_share_one_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.integration.test_quota_pacing import quota_refusals

    jobs = one_account_two_names(tmp_path, monkeypatch)
    journal = tmp_path / "j.sqlite"
    caplog.set_level(logging.DEBUG)
    async with Emulator(quota="2/1s", probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, quota="2/1s", journal=journal) as batch:
            results = [r async for r in batch.run(jobs)]
        assert [r.status for r in results] == [va.JobStatus.DONE] * 4
        assert quota_refusals(emu) == 0  # one window: the platform never had to refuse
    assert TOKEN_B not in caplog.text
    assert TOKEN_B.encode() not in journal.read_bytes()


async def test_a_job_whose_accounts_token_is_refused_fails_alone_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDAPI_REVOKED_TOKEN", REVOKED)
    jobs = account_then_own(tmp_path, "VIDAPI_REVOKED_TOKEN", ["a", "b"])
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, journal=journal) as batch:
            results = {r.job.title: r async for r in batch.run(jobs)}
        titles = [v["title"] for v in emu.videos()]
    assert titles == ["b"]
    assert results["a"].status is va.JobStatus.FAILED
    assert isinstance(results["a"].error, va.AccountError)
    assert not isinstance(results["a"].error, va.AccountNotSetError)
    assert results["a"].error.variable == "VIDAPI_REVOKED_TOKEN"
    assert results["b"].status is va.JobStatus.DONE
    errors = [r.error for r in va.SQLiteJournal(journal).records_sync() if r.error]
    assert len(errors) == 1 and "VIDAPI_REVOKED_TOKEN" in errors[0] and REVOKED not in errors[0]


async def test_an_unpaced_batch_stops_only_the_refused_accounts_creates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDAPI_ACCOUNT_B_TOKEN", TOKEN_B)
    jobs = account_then_own(tmp_path, "VIDAPI_ACCOUNT_B_TOKEN", ["b1", "a1", "a2", "a3"])
    (tmp_path / "b").mkdir()
    jobs.append(account_then_own(tmp_path / "b", "VIDAPI_ACCOUNT_B_TOKEN", ["b2"])[0])
    async with (
        Emulator(quota="1/1h", tokens={OWN: ALL_SCOPES}, probe=False) as emu,
        client_for(emu) as client,
    ):
        async with va.BatchUploader(client, journal=tmp_path / "j.sqlite", concurrency=1) as run:
            results = {r.job.title: r async for r in run.run(jobs)}
        made = owners(emu)
    # the client's own account: a1 made, a2 refused by the platform, a3 not sent;
    # the other account's window is its own: b2 is refused by the platform, not stopped
    assert made == {"b1": "other", "a1": "demo"}
    failed = {t: str(r.error) for t, r in results.items() if r.status is va.JobStatus.FAILED}
    assert sorted(failed) == ["a2", "a3", "b2"]
    assert "not sent" in failed["a3"]
    assert "not sent" not in failed["b2"]


async def test_an_update_refused_for_the_accounts_token_fails_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIDAPI_ACCOUNT_B_TOKEN", TOKEN_B)
    [job] = account_then_own(tmp_path, "VIDAPI_ACCOUNT_B_TOKEN", ["a"])
    journal = tmp_path / "j.sqlite"
    async with Emulator(probe=False) as emu, client_for(emu) as client:
        async with va.BatchUploader(client, journal=journal) as batch:
            [made] = [r async for r in batch.run([job])]
            assert made.status is va.JobStatus.DONE
            monkeypatch.setenv("VIDAPI_ACCOUNT_B_TOKEN", REVOKED)  # revoked since
            renamed = va.UploadJob(
                path=job.path, title="a, renamed", channel="news", account=job.account
            )
            [again] = [r async for r in batch.run([renamed])]
    assert again.status is va.JobStatus.FAILED
    assert isinstance(again.error, va.AccountError)
    assert again.error.variable == "VIDAPI_ACCOUNT_B_TOKEN" and REVOKED not in str(again.error)
