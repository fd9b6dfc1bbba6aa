"""Attack on 599e272/d3ad7d2 (structuring by shape): for every model, an answer read
through a kept plan (a shape seen before) must give exactly what the plain reading
(no plan: ``_PLANS_PER_CLASS`` = 0) gives: the same instance, or the same error naming
the same field. Answers drawn from keys of the model plus strangers, each value from
a pool of JSON values of every type (bool for int, float for int, null, huge ints,
NaN, lists and objects where strings go)."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vidapi_async._convert as convert
from vidapi_async import Video
from vidapi_async._errors import UnexpectedResponseError

POOL: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2**70,
    -(2**70),
    10**20,
    1.0,
    1.5,
    -0.5,
    math.nan,
    math.inf,
    "",
    "x",
    "12",
    "1.5",
    "Yes",
    "no",
    "10x20",
    [],
    ["a"],
    [1],
    ["a", None],
    [True],
    {},
    {"a": 1},
    "a" * 100_000,
]


def outcome(data: dict[str, Any], cls: type[Any]) -> object:
    try:
        made = convert.structure(data, cls, what="GET /x")
    except UnexpectedResponseError as exc:
        return ("error", str(exc))
    d = attrs.asdict(made, recurse=False)
    d.update(getattr(made, "__dict__", {}))
    return ("made", type(made), {k: (repr(v), type(v)) for k, v in d.items()})


def cell(fn: Any, name: str) -> Any:
    return fn.__closure__[fn.__code__.co_freevars.index(name)].cell_contents


def kept_plans(cls: type[Any]) -> dict[Any, Any]:
    """The plans kept for ``cls`` (the dict in ``_planned``'s closure)."""
    structure = convert._STRUCTURERS[cls]
    return cell(cell(structure, "planned"), "plans")  # type: ignore[no-any-return]


@pytest.mark.parametrize("cls", [Video])  # the one model with plans (the others: slots)
@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_planned_answer_reads_as_the_plain_reading(cls: type[Any], data: st.DataObject) -> None:
    names = [f.name for f in attrs.fields(cls) if f.name != "fields"] + ["zzz", "fields"]
    keys = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=8))
    if "id" not in keys and data.draw(st.booleans()):
        keys.append("id")
    first = {k: data.draw(st.sampled_from(POOL)) for k in keys}
    # the same shape, other values (same types): planned the first time, used the second
    second = {
        k: data.draw(st.sampled_from([v for v in POOL if type(v) is type(first[k])])) for k in keys
    }
    got = [outcome(first, cls), outcome(second, cls)]
    plans = kept_plans(cls)
    kept = dict(plans)
    saved = convert._PLANS_PER_CLASS
    plans.clear()
    convert._PLANS_PER_CLASS = 0  # type: ignore[misc]
    try:
        want = [outcome(first, cls), outcome(second, cls)]
    finally:
        convert._PLANS_PER_CLASS = saved  # type: ignore[misc]
        plans.update(kept)
    assert got == want
