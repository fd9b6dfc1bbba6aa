import inspect
from pathlib import Path

import pytest

import vidapi_async as va
from tests.conftest import make_file
from vidapi_async import _errors, embed
from vidapi_async.emulator import Emulator
from vidapi_async.testing import client_for


def test_all_lists_every_public_name_and_only_those() -> None:
    public = {n for n in dir(va) if not n.startswith("_") and not inspect.ismodule(getattr(va, n))}
    assert public - {"embed", "emulator"} == set(va.__all__) - {"__version__"}
    for name in va.__all__:
        assert hasattr(va, name), name


def test_every_exception_is_exported_and_drawn_in_the_tree() -> None:
    doc = _errors.__doc__ or ""
    for name in _errors.__all__:
        cls = getattr(_errors, name)
        assert issubclass(cls, va.VidapiError)
        assert getattr(va, name) is cls
        assert name in doc, f"{name} missing from the drawn tree"


def test_embed_module_all_is_complete() -> None:
    public = {
        n
        for n, v in vars(embed).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == embed.__name__
    }
    assert public <= set(embed.__all__)


def test_chunk_size_is_a_deprecated_alias_of_read_size() -> None:
    with pytest.warns(DeprecationWarning, match="read_size"):
        client = va.Client("t", chunk_size=123)
    assert client.read_size == 123
    with pytest.warns(DeprecationWarning, match="read_size"):
        assert client.chunk_size == 123


async def test_upload_file_chunk_size_keeps_its_old_meaning_per_mode(
    emulator: Emulator, tmp_path: Path
) -> None:
    src = make_file(tmp_path / "m.mp4", 10_000)
    async with client_for(emulator) as client:
        with pytest.warns(DeprecationWarning, match="range_size"):
            await client.upload_file(src, chunked=True, chunk_size=4096)
        with pytest.warns(DeprecationWarning, match="read_size"):
            await client.upload_file(src, chunk_size=4096)
    ranges = [r for r in emulator.requests if "Content-Range" in r.headers and r.body_size]
    assert sorted(r.body_size for r in ranges) == [1808, 4096, 4096]  # chunked: range size


def test_connection_limit_with_a_callers_session_is_refused() -> None:
    with pytest.raises(va.UsageError, match="connection_limit"):
        va.Client("t", session=object(), connection_limit=10)  # type: ignore[arg-type]
