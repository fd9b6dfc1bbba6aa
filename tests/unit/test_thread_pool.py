"""The upload pump's own thread pool: bounded, reused, and joined on close."""

from __future__ import annotations

import threading

import pytest

from vidapi_async._aio._threads import ThreadPool


def pool_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(name)]


def test_jobs_run_no_more_than_max_threads_at_once() -> None:
    pool = ThreadPool("t-bound", 3)
    gate = threading.Event()
    lock = threading.Lock()
    running = 0
    most = 0

    def job(i: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        gate.wait(5)
        with lock:
            running -= 1
        return i * i

    try:
        futures = [pool.submit(lambda i=i: job(i)) for i in range(10)]
        # three take jobs and wait at the gate; the other seven stay queued
        while True:
            with lock:
                if running == 3:
                    break
            threading.Event().wait(0.001)
        assert len([t for t in pool_threads("t-bound_") if t.is_alive()]) == 3
        gate.set()
        assert [f.result(5) for f in futures] == [i * i for i in range(10)]
        assert most == 3
    finally:
        pool.close()
    assert pool_threads("t-bound") == []


def test_a_free_worker_is_reused_rather_than_a_new_one_started() -> None:
    pool = ThreadPool("t-reuse", 8)
    try:
        names = [pool.submit(lambda: threading.current_thread().name).result(5) for _ in range(20)]
    finally:
        pool.close()
    assert set(names) == {"t-reuse_1"}


def test_a_jobs_exception_reaches_its_future_and_the_worker_lives_on() -> None:
    pool = ThreadPool("t-raise", 1)

    def boom() -> None:
        raise ValueError("job failed")

    try:
        with pytest.raises(ValueError, match="job failed"):
            pool.submit(boom).result(5)
        assert pool.submit(lambda: 7).result(5) == 7
    finally:
        pool.close()


def test_close_lets_queued_jobs_finish_then_refuses_more() -> None:
    pool = ThreadPool("t-close", 2)
    done: list[int] = []
    futures = [pool.submit(lambda i=i: done.append(i)) for i in range(6)]
    pool.close()
    assert all(f.done() for f in futures)
    assert sorted(done) == list(range(6))
    assert pool_threads("t-close") == []
    with pytest.raises(RuntimeError, match="closed"):
        pool.submit(lambda: None)


def test_max_threads_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_threads"):
        ThreadPool("t-zero", 0)
