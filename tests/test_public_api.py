import inspect

import vidapi_async as va
from vidapi_async import _errors, embed


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
