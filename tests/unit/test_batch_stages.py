"""The batch's stage table (``_stages.STEPS``) and the loop that runs it, in process:
which steps a job's record lets run, in which order, and the table's own order."""

from __future__ import annotations

from typing import Any, cast

from vidapi_async import Stage, UploadJob
from vidapi_async.batch._journal import JobRecord
from vidapi_async.batch._stages import CHECKS, STEPS, JobRun, Pipeline, Step, run_steps


def _table(ran: list[str], moves: dict[str, Stage]) -> list[Step]:
    """A table of stub steps recording their names; ``moves``: a step's record."""

    def step(name: str) -> Any:
        async def run(pipeline: Pipeline, job_run: JobRun) -> None:
            ran.append(name)
            if name in moves:
                job_run.record.stage = moves[name]

        return run

    return [
        Step(Stage.UPLOADED, step("check"), "nothing"),
        Step(Stage.UPLOADED, step("upload"), "uploaded"),
        Step(Stage.CREATED, step("create"), "created"),
        Step(Stage.LIVE, step("live"), "live"),
        Step(Stage.DONE, step("done"), "done"),
    ]


def _run(stage: Stage) -> JobRun:
    return JobRun(
        UploadJob(url="https://example.com/v.mp4", title="t", channel="news"), JobRecord("k", stage)
    )


async def test_a_new_job_runs_every_step_in_order() -> None:
    ran: list[str] = []
    moves = {"upload": Stage.UPLOADED, "create": Stage.CREATED, "live": Stage.LIVE}
    await run_steps(cast(Pipeline, None), _run(Stage.PENDING), _table(ran, moves))
    assert ran == ["check", "upload", "create", "live", "done"]


async def test_a_resumed_job_skips_the_steps_its_record_passed() -> None:
    ran: list[str] = []
    await run_steps(cast(Pipeline, None), _run(Stage.CREATING), _table(ran, {}))
    assert ran == ["create", "live", "done"]
    ran.clear()
    await run_steps(cast(Pipeline, None), _run(Stage.LIVE), _table(ran, {}))
    assert ran == ["done"]


async def test_a_step_that_records_done_ends_the_job() -> None:
    ran: list[str] = []
    await run_steps(cast(Pipeline, None), _run(Stage.PENDING), _table(ran, {"create": Stage.DONE}))
    assert ran == ["check", "upload", "create"]


async def test_a_done_job_runs_nothing() -> None:
    ran: list[str] = []
    await run_steps(cast(Pipeline, None), _run(Stage.DONE), _table(ran, {}))
    assert ran == []


def test_the_table_records_stages_in_order_after_its_checks() -> None:
    """The checks come first; the steps that record a stage follow in the stages'
    order (a wait, which records nothing, may stand between them), each a ``Pipeline``
    method, ending at ``done``. Adoption aside: it runs for every job whose create was
    never sent (its stage ``creating``), before the upload, and jumps a job it adopts to
    ``created`` or ``done`` (issue 40, round three)."""
    checks = [step for step in STEPS if step.records == "nothing (a check)"]
    [adopt] = [step for step in STEPS if step.run is Pipeline.adopt]
    assert adopt.stage is Stage.CREATING
    assert STEPS.index(adopt) < [s.run for s in STEPS].index(Pipeline.upload)
    recording = [s for s in STEPS if not s.records.startswith("nothing") and s is not adopt]
    assert list(STEPS[: len(checks)]) == checks == list(CHECKS)
    ranks = [step.stage.rank for step in recording]
    assert ranks == sorted(ranks)
    assert len(set(ranks)) == len(ranks)
    assert recording[-1].stage is Stage.DONE
    assert all(getattr(Pipeline, step.run.__name__) is step.run for step in STEPS)
