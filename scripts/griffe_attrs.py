"""griffe extension for the reference: an attrs class's constructor signature.

attrs writes a class's ``__init__`` at run time, so the static reading of the source sees
none, and shows each field's ``attrs.field(default=..., converter=...)`` as its value.
For every attrs class, this one imports the class, reads the ``__init__`` attrs wrote
(its parameters typed as the converters take them: ``path: str | os.PathLike[str] |
None``), gives the class that ``__init__`` (merged into the class's heading by
``merge_init_into_class``), and shows each field's default instead of its
``attrs.field(...)`` call.
"""

from __future__ import annotations

import inspect
from typing import Any

import attrs
import griffe

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: griffe.ParameterKind.positional_only,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: griffe.ParameterKind.positional_or_keyword,
    inspect.Parameter.VAR_POSITIONAL: griffe.ParameterKind.var_positional,
    inspect.Parameter.KEYWORD_ONLY: griffe.ParameterKind.keyword_only,
    inspect.Parameter.VAR_KEYWORD: griffe.ParameterKind.var_keyword,
}


def _annotation(value: object) -> str | None:
    if value is inspect.Parameter.empty:
        return None
    return value if isinstance(value, str) else inspect.formatannotation(value)


def constructor(runtime: type) -> griffe.Function:
    """The ``__init__`` attrs wrote for ``runtime``, as griffe's function."""
    signature = inspect.signature(runtime.__init__)
    parameters = [
        griffe.Parameter(
            p.name,
            annotation=_annotation(p.annotation),
            kind=_KINDS[p.kind],
            default=None if p.default is inspect.Parameter.empty else _default(p.default),
        )
        for p in signature.parameters.values()
    ]
    return griffe.Function("__init__", parameters=griffe.Parameters(*parameters), returns="None")


def _default(value: object) -> str:
    if isinstance(value, attrs.Factory):  # type: ignore[arg-type]
        factory = value.factory
        return f"{getattr(factory, '__name__', 'factory')}()"
    return repr(value)


class AttrsConstructors(griffe.Extension):
    """Gives each attrs class the ``__init__`` attrs writes for it."""

    def on_class_members(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        if "__init__" in cls.members:
            return
        try:
            runtime = griffe.dynamic_import(cls.path)
        except ImportError:
            return
        if not (isinstance(runtime, type) and attrs.has(runtime)):
            return
        init = constructor(runtime)
        init.parent = cls
        cls.set_member("__init__", init)
        for field in attrs.fields(runtime):
            member = cls.members.get(field.name)
            if isinstance(member, griffe.Attribute) and "attrs.field(" in str(member.value):
                default = field.default
                member.value = None if default is attrs.NOTHING else _default(default)
