"""What a raw call's request shares in both dialects (``client.get/post/delete``):
the path, the query and ``fields=`` checked before anything is sent, and a JSON
body. Each dialect's module builds the request itself (``_legacy.raw_request``,
``_v2.raw_request``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from .. import _validate as check
from .._errors import InvalidArgumentError, UsageError
from ._requests import api_path, form_fields

__all__ = ["add_fields", "json_body", "raw_form", "raw_path"]


def raw_path(path: object) -> str:
    """A raw call's path on the API root, or ``InvalidArgumentError``."""
    try:
        return api_path(path)
    except ValueError as exc:
        raise InvalidArgumentError("path", str(exc)) from None


def raw_form(values: Mapping[str, object] | None, argument: str) -> list[tuple[str, str]]:
    """``params`` (or a legacy ``data``) as form pairs, or a typed error."""
    try:
        return form_fields(values, argument)
    except TypeError as exc:
        raise InvalidArgumentError(str(exc).split(":", 1)[0], str(exc).split(": ", 1)[1]) from None


def add_fields(query: list[tuple[str, str]], fields: Iterable[str] | str | None) -> None:
    """``fields`` (a list, or ``"id,title"``) added to a raw call's ``query``."""
    if fields is not None:
        if isinstance(fields, str):
            fields = fields.split(",")  # "id,title" as the platform writes it
        if any(k == "fields" for k, _ in query):
            raise UsageError("give the fields once: fields= or params['fields'], not both")
        query.append(("fields", check.fields_value(fields)))


def json_body(data: Mapping[str, object] | None) -> bytes:
    """API v2's JSON body for a raw write: the mapping as JSON, or a typed error."""
    if data is not None and not isinstance(data, Mapping):
        raise InvalidArgumentError("data", "expected a mapping")
    try:
        text = json.dumps(dict(data or {}), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError("data", f"not JSON: {exc}") from None
    return text.encode("utf-8")
