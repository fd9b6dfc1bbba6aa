"""The one cattrs converter: wire data (decoded JSON) to models, with strict wire types.

cattrs' default hooks coerce silently (``"No"`` becomes ``True`` for a bool, ``1.9``
becomes ``1`` for an int), so every wire type here has its own strict hook: a value that
does not have the platform's shape is an error, never a guess. Unknown keys are ignored,
since the platform adds fields over time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, NewType, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override
from cattrs.v import format_exception

from ._errors import UnexpectedResponseError
from ._models import (
    Dimension,
    Player,
    Playlist,
    Subtitle,
    UploadedFile,
    UploadProgress,
    UploadSession,
    User,
    Video,
    Webhook,
)

__all__ = ["category_page", "structure", "webhook_of"]

ByteCount = NewType("ByteCount", int)
"""A non-negative integer, sent as digits in a string or as a JSON integer."""
Seconds = NewType("Seconds", float)
"""A number of seconds, sent as numeric text or a JSON number."""
Milliseconds = NewType("Milliseconds", float)
"""A duration sent in milliseconds (the upload descriptor's ``"36920"``), read as seconds."""
YesNo = NewType("YesNo", bool)
"""The upload server's ``"Yes"``/``"No"`` text."""
Flag = NewType("Flag", bool)
"""A JSON boolean, and nothing else."""
Text = NewType("Text", str)
"""A JSON string, and nothing else (no str() of numbers or objects)."""
ObjectId = NewType("ObjectId", str)
"""An object's id: a non-empty JSON string, never null (it names what was created)."""
Timestamp = NewType("Timestamp", int)
"""A UNIX timestamp: a JSON integer."""
UnixTime = NewType("UnixTime", datetime)
"""A UNIX timestamp (a JSON integer) read as an aware ``datetime`` in UTC."""
Count = NewType("Count", int)
"""A non-negative JSON integer (a duration in seconds, a number of views)."""
TextList = NewType("TextList", list)  # type: ignore[type-arg]
"""A JSON list of strings (tags, geoblocking): never a comma-joined string."""

_DIGITS = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_DIMENSION = re.compile(r"([0-9]+)x([0-9]+)")


def _byte_count(value: object, _: object) -> ByteCount:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return ByteCount(value)
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return ByteCount(int(value))
    raise ValueError(f"expected a byte count (digits), got {value!r}")


def _seconds(value: object, _: object) -> Seconds:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return Seconds(float(value))
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return Seconds(float(value))
    raise ValueError(f"expected a number of seconds, got {value!r}")


def _milliseconds(value: object, _: object) -> Milliseconds:
    return Milliseconds(_seconds(value, _) / 1000)


def _yes_no(value: object, _: object) -> YesNo:
    if isinstance(value, str) and value.lower() in ("yes", "no"):
        return YesNo(value.lower() == "yes")
    raise ValueError(f'expected "Yes" or "No", got {value!r}')


def _flag(value: object, _: object) -> Flag:
    if isinstance(value, bool):
        return Flag(value)
    raise ValueError(f"expected a JSON boolean, got {value!r}")


def _text(value: object, _: object) -> Text:
    if isinstance(value, str):
        return Text(value)
    raise ValueError(f"expected a string, got {value!r}")


def _object_id(value: object, _: object) -> ObjectId:
    if isinstance(value, str) and value:
        return value  # type: ignore[return-value] # (no call: ObjectId(value) returns it)
    raise ValueError(f"expected an object id (a non-empty string), got {value!r}")


def _timestamp(value: object, _: object) -> Timestamp:
    if isinstance(value, int) and not isinstance(value, bool):
        return Timestamp(value)
    raise ValueError(f"expected a UNIX timestamp, got {value!r}")


def _unix_time(value: object, _: object) -> UnixTime:
    seconds = _timestamp(value, _)
    try:
        return UnixTime(datetime.fromtimestamp(seconds, tz=UTC))
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"expected a UNIX timestamp, got {value!r}") from None


def _count(value: object, _: object) -> Count:
    if type(value) is int and value >= 0:  # JSON's: no call (Count(value) returns it)
        return value  # type: ignore[return-value]
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return Count(value)
    raise ValueError(f"expected a non-negative JSON integer, got {value!r}")


def _text_list(value: object, _: object) -> TextList:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return TextList(list(value))
    raise ValueError(f"expected a JSON list of strings, got {value!r:.80}")


def _dimension(value: object, _: object) -> Dimension:
    if isinstance(value, str) and (m := _DIMENSION.fullmatch(value)):
        return Dimension(int(m.group(1)), int(m.group(2)))
    raise ValueError(f'expected "<width>x<height>", got {value!r}')


_converter = cattrs.Converter(forbid_extra_keys=False)
_converter.register_structure_hook(ByteCount, _byte_count)
_converter.register_structure_hook(Seconds, _seconds)
_converter.register_structure_hook(Milliseconds, _milliseconds)
_converter.register_structure_hook(YesNo, _yes_no)
_converter.register_structure_hook(Flag, _flag)
_converter.register_structure_hook(Text, _text)
_converter.register_structure_hook(Timestamp, _timestamp)
_converter.register_structure_hook(ObjectId, _object_id)
_converter.register_structure_hook(Dimension, _dimension)
_converter.register_structure_hook(UnixTime, _unix_time)
_converter.register_structure_hook(Count, _count)
_converter.register_structure_hook(TextList, _text_list)

T = TypeVar("T")


def _wire_types(
    cls: type[Any],
    types: Mapping[str, Any],
    required: Mapping[str, Any] | None = None,
    *,
    fields: bool = False,
) -> Callable[[Mapping[str, Any]], Any]:
    """A structure function for ``cls`` that reads each field through its wire type.

    The models' annotations say what a user gets (``int | None``); ``types`` says what
    the wire sends (``ByteCount | None``), so the models stay free of wire rules.
    ``required`` fields take their wire type with no ``null`` allowed. ``fields``: the
    model keeps every field received (``fields``, a copy of the answer), known or not.
    """
    overrides = {name: override(struct_hook=_optional(wire)) for name, wire in types.items()}
    for name, wire in (required or {}).items():
        overrides[name] = override(struct_hook=_converter.get_structure_hook(wire))
    fast = make_dict_structure_fn(
        cls,
        _converter,
        _cattrs_detailed_validation=False,
        **overrides,  # type: ignore[arg-type]
    )
    detailed = make_dict_structure_fn(cls, _converter, **overrides)  # type: ignore[arg-type]
    # The fast path reads only the keys the answer holds (a few of a model's 30 fields),
    # with the same hooks as cattrs' function; a str or bool where the wire type passes
    # one as it is goes in without a call. A key cattrs would read with a hook of its
    # own choosing (a field without a wire type here) goes to cattrs' function instead.
    # Each key's wire hook (``None``: taken as it is) with its type, called directly:
    # a null where one is allowed (``nullable``) is read here, not by ``_optional``'s
    # wrapper (one call fewer per key).
    hooks: dict[str, tuple[Callable[[object, object], Any], Any] | None] = {}
    exact: dict[str, type] = {}
    nullable = frozenset(types)
    for name, wire in types.items():
        hooks[name] = None if wire is Any else (_converter.get_structure_hook(wire), wire)
        if wire in _PASSED_AS_IS:
            exact[name] = _PASSED_AS_IS[wire]
    for name, wire in (required or {}).items():
        hooks[name] = (_converter.get_structure_hook(wire), wire)
    if fields:
        del hooks["fields"]  # the copy of the whole answer, below
    by_cattrs = {f.name for f in attrs.fields(cls)} - set(hooks) - {"fields"}
    build = _builder(cls, always={"fields"} if fields else set())
    planned = _planned(cls, hooks, exact, nullable, by_cattrs, fields)

    def read(data: Mapping[str, Any]) -> Any:
        values: dict[str, Any] = {}
        for key, value in data.items():
            kind = exact.get(key)
            if kind is not None and (value is None or type(value) is kind):
                values[key] = value
            elif key in hooks:
                hook = hooks[key]
                if hook is None or (value is None and key in nullable):
                    values[key] = value
                else:
                    values[key] = hook[0](value, hook[1])
            elif key in by_cattrs:
                return fast({**data, "fields": dict(data)} if fields else data, cls)
        if fields:
            values["fields"] = data
        return build(values)

    def structure(data: Mapping[str, Any]) -> Any:
        try:
            if planned is not None and type(data) is dict:
                made = planned(data)  # an answer of a shape seen before
                if made is not None:
                    return made
            return read(data)
        except Exception:
            # Only a malformed answer gets here: read it again, noting every problem.
            return detailed({**data, "fields": dict(data)} if fields else data, cls)

    return structure


_PLANS_PER_CLASS: Final = 64
"""Shapes of answer (keys and value types) whose reading is kept, per model."""


def _planned(
    cls: type[Any],
    hooks: Mapping[str, tuple[Callable[[object, object], Any], Any] | None],
    exact: Mapping[str, type],
    nullable: frozenset[str],
    by_cattrs: set[str],
    fields: bool,
) -> Callable[[dict[str, Any]], Any] | None:
    """``read``'s work for an answer of a shape seen before, or ``None`` where ``cls``
    is not a plain dict class (``_builder``'s fast form) and ``read`` does it all.

    An answer's shape is its keys and the types of its values, in order: one tuple
    made in C. What ``read`` decides from the type alone (a value passed as it is:
    null, a value of exactly its wire's JSON type, a field without a wire type; a key
    not of the model, ignored) is decided once per shape and kept (``_PLANS_PER_CLASS``
    shapes); every value whose check depends on the value itself (an id not empty, a
    count not negative, a timestamp in range) still goes through its strict hook at
    every call, exactly as ``read`` calls it. An answer with a key cattrs reads, or
    without a required field, is left to ``read`` (no plan: the same error as before).
    The instance is made as ``_builder``'s: the defaults, then the answer's own values
    over them, in one dictionary."""
    if not _dict_class(cls, {"fields"} if fields else set()):
        return None
    attributes = attrs.fields(cls)
    defaults = {f.name: f.default for f in attributes if f.default is not attrs.NOTHING}
    required = frozenset(f.name for f in attributes if f.default is attrs.NOTHING)
    converters = {f.name: f.converter for f in attributes if f.converter is not None}
    keep = converters.get("fields") if fields else None
    plans: dict[tuple[object, ...], _Plan | None] = {}
    new = object.__new__
    set_attribute = object.__setattr__

    def plan(shape: tuple[Any, ...]) -> _Plan | None:
        keys: tuple[str, ...] = shape[: len(shape) // 2]
        checked: list[tuple[str, Callable[[object, object], Any], Any]] = []
        ignored: list[str] = []
        for key, kind in zip(keys, shape[len(keys) :], strict=True):
            if key in by_cattrs or key in converters:
                return None  # cattrs' own reading, or a converter: ``read`` and ``build``
            if key not in hooks:
                if key != "fields" or not fields:
                    ignored.append(key)  # not of the model (``fields`` is set below)
                continue
            hook = hooks[key]
            if hook is None or (kind is type(None) and key in nullable):
                pass  # as it is
            elif exact.get(key) is kind:
                pass  # exactly its wire's JSON type: the hook would return it unchanged
            else:
                checked.append((key, hook[0], hook[1]))
        if not required <= set(keys):
            return None
        return tuple(checked), tuple(ignored)

    def planned(data: dict[str, Any]) -> Any:
        shape = (*data, *map(type, data.values()))  # the keys, then their values' types
        found = plans.get(shape, _UNSEEN)
        if found is _UNSEEN:
            if len(plans) >= _PLANS_PER_CLASS:
                return None  # a shape past the kept ones: ``read`` alone, as before
            found = plans[shape] = plan(shape)
        if found is None:
            return None
        checked, ignored = found
        values = {**defaults, **data}
        for key, hook, wire in checked:
            values[key] = hook(values[key], wire)
        for key in ignored:
            del values[key]
        if fields:
            values["fields"] = keep(data) if keep else data
        made = new(cls)
        set_attribute(made, "__dict__", values)
        return made

    return planned


_Plan = tuple[tuple[tuple[str, Callable[[object, object], Any], Any], ...], tuple[str, ...]]
"""An answer shape's reading: the (key, hook, wire type) still checked per call, and
the keys not of the model."""
_UNSEEN: Final[_Plan] = ((), ())
"""A shape not read yet (told apart by identity: every plan is a tuple of its own)."""


def _dict_class(cls: type[Any], always: set[str]) -> bool:
    """Whether ``cls``'s ``__init__`` does nothing but store its arguments in
    ``__dict__``: no slots, validator, pre- or post-init hook, every field's argument
    named as the field, every default a plain value but for the fields in ``always``
    (given on every call)."""
    return (
        "__slots__" not in cls.__dict__
        and not hasattr(cls, "__attrs_post_init__")
        and not hasattr(cls, "__attrs_pre_init__")
        and all(
            f.validator is None
            and f.init
            and f.alias == f.name
            and (f.name in always or not isinstance(f.default, attrs.Factory))  # type: ignore[arg-type]
            for f in attrs.fields(cls)
        )
    )


def _builder(cls: type[Any], always: set[str]) -> Callable[[dict[str, Any]], Any]:
    """What builds ``cls`` from checked values: its ``__init__``, or, for a frozen class
    that keeps its fields in ``__dict__`` (``Video``: 32 of them), the same result in
    two dictionary updates: the defaults, then the values given (each through the
    field's converter). ``__init__`` passes each field to ``__setattr__``-free stores
    one at a time, about 17k instructions a ``Video`` against 4k here. Only where
    nothing in ``__init__`` is more than that: no validator, no post-init hook, every
    default a plain value but for the fields in ``always`` (given on every call), the
    same names in the dictionary as the fields; a missing required field raises as
    ``__init__`` does (``TypeError``: the caller reads the answer again with cattrs)."""
    fields = attrs.fields(cls)
    if not _dict_class(cls, always):
        return lambda values: cls(**values)
    defaults = {f.name: f.default for f in fields if f.default is not attrs.NOTHING}
    required = tuple(f.name for f in fields if f.default is attrs.NOTHING)
    converters = {f.name: f.converter for f in fields if f.converter is not None}
    new = object.__new__
    set_attribute = object.__setattr__

    def build(values: dict[str, Any]) -> Any:
        for name in required:  # (a set's <= of a dict's keys: 6 times as long)
            if name not in values:
                missing = sorted(set(required) - values.keys())
                raise TypeError(f"{cls.__name__}: missing {missing}")
        for name, convert in converters.items():
            if name in values:
                values[name] = convert(values[name])
        made = new(cls)
        # one dictionary: the defaults copied whole, the values over them
        set_attribute(made, "__dict__", {**defaults, **values})
        return made

    return build


def _optional(wire: Any) -> Callable[[object, object], Any]:
    inner = _converter.get_structure_hook(wire)
    exact = _PASSED_AS_IS.get(wire)
    if exact is not None:
        # The common case in one call: null, or a value of exactly the wire's JSON type.

        def fast(value: object, _: object) -> Any:
            if value is None or type(value) is exact:
                return value
            return inner(value, wire)

        return fast

    def hook(value: object, _: object) -> Any:
        return None if value is None else inner(value, wire)

    return hook


_PASSED_AS_IS: dict[Any, type] = {Text: str, Flag: bool}
"""Wire types whose hook returns a value of this exact type unchanged."""


_str_fields = ("acodec", "vcodec", "format", "hash", "name", "seal")
_uploaded_file = _wire_types(
    UploadedFile,
    {
        "url": Text,
        "size": ByteCount,
        "bitrate": ByteCount,
        "duration": Milliseconds,
        "dimension": Dimension,
        "streamable": YesNo,
        **dict.fromkeys(_str_fields, Text),
        "raw": Any,
    },
)
_upload_session = _wire_types(UploadSession, {"upload_url": Text, "progress_url": Text})
_upload_progress = _wire_types(
    UploadProgress, {"state": Text, "size": ByteCount, "received": ByteCount}
)
_video = _wire_types(
    Video,
    {
        **dict.fromkeys(
            (
                "title",
                "channel",
                "owner",
                "mode",
                "status",
                "live_publish_url",
                "record_status",
                "stream_live_hls_url",
                "description",
                "language",
                "private_id",
                "url",
                "embed_url",
                "thumbnail_url",
            ),
            Text,
        ),
        **dict.fromkeys(
            (
                "published",
                "password_protected",
                "onair",
                "private",
                "explicit",
                "is_created_for_kids",
            ),
            Flag,
        ),
        **dict.fromkeys(("start_time", "end_time"), Timestamp),
        **dict.fromkeys(("created_time", "publish_date", "expiry_date"), UnixTime),
        **dict.fromkeys(("duration", "views_total"), Count),
        **dict.fromkeys(("tags", "geoblocking"), TextList),
        "fields": Any,
    },
    required={"id": ObjectId},
    fields=True,
)
_subtitle = _wire_types(
    Subtitle,
    {
        **dict.fromkeys(("id", "language", "format", "url", "language_label", "item_type"), Text),
        "fields": Any,
    },
    fields=True,
)

_playlist = _wire_types(
    Playlist,
    {
        **dict.fromkeys(("name", "description", "owner"), Text),
        "private": Flag,
        "videos_total": ByteCount,
        "fields": Any,
    },
    required={"id": ObjectId},
    fields=True,
)
_player = _wire_types(
    Player,
    {**dict.fromkeys(("label", "owner"), Text), "fields": Any},
    required={"id": ObjectId},
    fields=True,
)
_user = _wire_types(
    User,
    {**dict.fromkeys(("username", "screenname", "fullname"), Text), "fields": Any},
    required={"id": ObjectId},
    fields=True,
)


def _structure_uploaded_file(data: Mapping[str, Any]) -> UploadedFile:
    # The upload server sends "" for what does not apply (no codec in a subtitle file):
    # that is "absent", not a malformed number.
    present = {k: v for k, v in data.items() if v != "" and k != "raw"}
    if "url" not in present:
        raise ValueError("the descriptor has no url")
    return _uploaded_file({**present, "raw": dict(data)})  # type: ignore[no-any-return]


_STRUCTURERS: dict[type[Any], Callable[[Mapping[str, Any]], Any]] = {
    UploadedFile: _structure_uploaded_file,
    UploadSession: _upload_session,
    UploadProgress: _upload_progress,
    Video: _video,
    Subtitle: _subtitle,
    Playlist: _playlist,
    Player: _player,
    User: _user,
}


def _describe(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, ValueError) and exc.args:
        return str(exc)
    return format_exception(exc, type_)


def structure(data: object, cls: type[T], *, what: str, status: int | None = None) -> T:
    """Build ``cls`` from decoded JSON, or raise ``UnexpectedResponseError``.

    ``what`` names the response in the error (e.g. ``"GET /file/upload"``); the error
    lists every offending field with its path.
    """
    if type(data) is not dict and not isinstance(data, Mapping):
        raise UnexpectedResponseError(
            f"{what}: expected a JSON object, got {type(data).__name__}", status=status
        )
    try:
        return _STRUCTURERS[cls](data)  # type: ignore[no-any-return]
    except cattrs.ClassValidationError as exc:
        problems = "; ".join(cattrs.transform_error(exc, path=what, format_exception=_describe))
        raise UnexpectedResponseError(problems, status=status) from exc
    except (ValueError, TypeError, KeyError) as exc:
        raise UnexpectedResponseError(f"{what}: {exc}", status=status) from exc


def category_page(data: Mapping[str, Any], *, what: str) -> tuple[list[str], bool]:
    """One page of ``GET /channels``: the slugs (each item's ``id``) and ``has_more``."""
    items = data.get("list")
    if not isinstance(items, list) or not all(
        isinstance(item, Mapping) and isinstance(item.get("id"), str) and item["id"]
        for item in items
    ):
        raise UnexpectedResponseError(
            f"{what}: expected a list of categories with ids", status=None
        )
    return [item["id"] for item in items], data.get("has_more") is True


def webhook_of(data: Mapping[str, Any], what: str) -> Webhook | None:
    """The webhook in ``/me``'s ``webhook_url``/``webhook_events``; ``None`` if unset."""
    url, events = data.get("webhook_url"), data.get("webhook_events")
    if url in (None, ""):
        return None
    if not isinstance(url, str):
        raise UnexpectedResponseError(f"{what}: webhook_url is not a string", status=200)
    if isinstance(events, str):
        names = tuple(e for e in events.split(",") if e)
    elif isinstance(events, list) and all(isinstance(e, str) for e in events):
        names = tuple(events)
    elif events is None:
        names = ()
    else:
        raise UnexpectedResponseError(f"{what}: webhook_events is not a list", status=200)
    return Webhook(url=url, events=names)
