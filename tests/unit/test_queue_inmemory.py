"""The shared queue's procrastinate side, in process: procrastinate's own worker and job
manager on its ``InMemoryConnector`` (no PostgreSQL), with the queue's retry strategy,
takeover and readings (``vidapi_async.batch._queue``). The same code against PostgreSQL,
with outages and killed workers: tests/test_shared_queue*.py (system lane)."""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import pytest

procrastinate = pytest.importorskip("procrastinate")

from procrastinate import testing  # noqa: E402
from procrastinate.jobs import Status  # noqa: E402

from vidapi_async.batch import _queue  # noqa: E402

TASK = "vidapi.pipeline"
QUEUE = "q"


def app_with(task: Any) -> Any:
    app = procrastinate.App(connector=testing.InMemoryConnector())
    app.task(name=TASK, queue=QUEUE, pass_context=True, retry=_queue.Retry())(task)
    return app


async def defer(app: Any, *keys: str) -> None:
    await app.job_manager.batch_defer_jobs_async(
        [_queue.new_job(TASK, QUEUE, key, key) for key in keys]
    )


async def run_until_idle(app: Any) -> None:
    await asyncio.wait_for(
        app.run_worker_async(queues=[QUEUE], wait=False, install_signal_handlers=False), 30
    )


def statuses(app: Any) -> list[str]:
    return [job["status"] for job in app.connector.jobs.values()]


@pytest.fixture(autouse=True)
def no_retry_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_queue, "RETRY_WAIT", 0)


async def test_a_job_handed_back_uses_up_no_attempt() -> None:
    """Handed back twice as many times as the attempts a job has (a worker's refused
    credentials, no fault of the job's): it is still run, and then succeeds."""
    runs: list[int] = []

    async def task(context: Any, key: str) -> None:
        runs.append(context.job.attempts)
        if len(runs) <= 2 * _queue.MAX_ATTEMPTS:
            raise _queue.GivenBack("AuthenticationError: refused")

    async with app_with(task).open_async() as app:
        await defer(app, "k")
        await run_until_idle(app)
        assert statuses(app) == ["succeeded"]
    assert len(runs) == 2 * _queue.MAX_ATTEMPTS + 1


async def test_a_transient_failure_is_tried_max_attempts_times_again_then_failed() -> None:
    runs: list[int] = []

    async def task(context: Any, key: str) -> None:
        runs.append(context.job.attempts)
        raise _queue.Transient("ServerError: 503", attempts=context.job.attempts)

    async with app_with(task).open_async() as app:
        await defer(app, "k")
        await run_until_idle(app)
        assert statuses(app) == ["failed"]
    assert runs == list(range(_queue.MAX_ATTEMPTS + 1))


async def test_the_attempts_a_transient_failure_counts_are_its_own() -> None:
    """``Transient.attempts`` (procrastinate's count less the hand-backs), not
    procrastinate's count, decides: a job handed back before still has all its tries."""
    runs: list[int] = []

    async def task(context: Any, key: str) -> None:
        runs.append(context.job.attempts)
        if len(runs) <= 3:
            raise _queue.GivenBack("refused")
        raise _queue.Transient("503", attempts=context.job.attempts - 3)

    async with app_with(task).open_async() as app:
        await defer(app, "k")
        await run_until_idle(app)
        assert statuses(app) == ["failed"]
    assert len(runs) == 3 + _queue.MAX_ATTEMPTS + 1


async def test_other_errors_count_procrastinates_attempts_and_never_means_never() -> None:
    strategy = _queue.Retry(never=(KeyError,))
    job = _queue.new_job(TASK, QUEUE, "k", "k")
    assert strategy.get_retry_decision(exception=KeyError("x"), job=job) is None
    assert strategy.get_retry_decision(exception=ValueError("x"), job=job) is not None
    spent = job.evolve(attempts=_queue.MAX_ATTEMPTS)
    assert strategy.get_retry_decision(exception=ValueError("x"), job=spent) is None
    assert strategy.get_retry_decision(exception=_queue.GivenBack("x"), job=spent) is not None


async def stalled_job(app: Any, key: str) -> tuple[int, Any]:
    """A job fetched by a worker that then went silent (no heartbeat since)."""
    manager = app.job_manager
    dead = await manager.register_worker()
    await defer(app, key)
    job = await manager.fetch_job(queues=[QUEUE], worker_id=dead)
    assert job is not None
    app.connector.workers[dead] = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    return dead, job


async def test_a_stalled_job_is_queued_again_as_a_new_job_once() -> None:
    async def task(context: Any, key: str) -> None:
        pass

    async with app_with(task).open_async() as app:
        _, old = await stalled_job(app, "k")
        # two live workers taking it over at the same moment, then again
        told = list(
            await asyncio.gather(*(_queue.take_over(app, TASK, QUEUE, 60) for _ in range(2)))
        )
        told.append(await _queue.take_over(app, TASK, QUEUE, 60))
        assert [key for keys in told for key in keys] == ["k"]
        jobs = {job["id"]: job["status"] for job in app.connector.jobs.values()}
        assert jobs.pop(old.id) == "aborted"
        assert list(jobs.values()) == ["todo"]
        assert await _queue.key_states(app, QUEUE) == {"k": "todo"}


async def test_the_first_holder_of_a_job_taken_over_cannot_touch_the_new_one() -> None:
    """The first holder comes back and ends its job (as procrastinate's worker does
    after the task): the new job is untouched, run once by a live worker."""
    runs: list[str] = []

    async def task(context: Any, key: str) -> None:
        runs.append(key)

    async with app_with(task).open_async() as app:
        _, old = await stalled_job(app, "k")
        assert await _queue.take_over(app, TASK, QUEUE, 60) == ["k"]
        await app.job_manager.finish_job(old, status=Status.SUCCEEDED, delete_job=False)
        assert await _queue.key_states(app, QUEUE) == {"k": "todo"}
        await run_until_idle(app)
    assert runs == ["k"]


async def test_a_job_of_a_live_worker_is_not_taken_over() -> None:
    async def task(context: Any, key: str) -> None:
        pass

    async with app_with(task).open_async() as app:
        manager = app.job_manager
        live = await manager.register_worker()
        await defer(app, "k")
        assert await manager.fetch_job(queues=[QUEUE], worker_id=live) is not None
        assert await _queue.take_over(app, TASK, QUEUE, 60) == []
        assert await _queue.key_states(app, QUEUE) == {"k": "doing"}
        assert await _queue.queue_counts(app, QUEUE) == (0, 1)


async def test_key_states_and_counts_read_the_queue() -> None:
    async def task(context: Any, key: str) -> None:
        if key == "bad":
            raise KeyError(key)  # not retried: spent at once below

    async with app_with(task).open_async() as app:
        assert await _queue.queue_counts(app, QUEUE) == (0, 0)
        await defer(app, "ok", "bad")
        assert await _queue.queue_counts(app, QUEUE) == (2, 0)
        for job in app.connector.jobs.values():
            job["attempts"] = _queue.MAX_ATTEMPTS  # the last try of each
        await run_until_idle(app)
        await defer(app, "later")
        assert await _queue.key_states(app, QUEUE) == {"bad": "failed", "later": "todo"}
        assert await _queue.key_states(app, QUEUE, ["later"]) == {"later": "todo"}
        assert await _queue.queue_counts(app, QUEUE) == (1, 0)
        # a key failed once and queued again is queued
        await defer(app, "bad")
        assert (await _queue.key_states(app, QUEUE))["bad"] == "todo"


async def test_apply_schema_checks_first_then_applies() -> None:
    """The queue's one call outside procrastinate's API reference: pinned here (applied
    to PostgreSQL by every system-lane test of the queue)."""
    import inspect

    app = procrastinate.App(connector=testing.InMemoryConnector())
    assert inspect.iscoroutinefunction(app.schema_manager.apply_schema_async)
    async with app.open_async():
        await _queue.apply_schema(app)  # the tables are there: nothing applied
        assert [name for name, _ in app.connector.queries] == ["check_connection"]
