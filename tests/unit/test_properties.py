"""Property tests (hypothesis): whatever a server sends, whatever a user names a file or
a job, the pure layers answer with data or a ``VidapiError``, and what goes on the wire
stays well-formed."""

from __future__ import annotations

import contextlib
import html.parser
import json
import re
import urllib.parse
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vidapi_async as va
from tests.examples import examples
from vidapi_async import _protocol as wire
from vidapi_async import embed
from vidapi_async._convert import structure
from vidapi_async._models import Subtitle, UploadedFile, UploadProgress, UploadSession, Video
from vidapi_async._protocol import attachment_disposition, multipart_envelope
from vidapi_async.batch._stages import tag as _tag

SETTINGS = settings(
    max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
field_names = st.sampled_from(
    ["id", "url", "size", "title", "error", "list", "has_more", "access_token", "expires_in",
     "state", "streamable", "dimension", "duration", "published", "message", "code", "type"]
)  # fmt: skip
objects = st.dictionaries(field_names | st.text(max_size=6), json_values, max_size=8)
bodies = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
    objects.map(lambda v: json.dumps(v).encode()),
)
statuses = st.sampled_from([200, 201, 202, 204, 400, 401, 403, 404, 409, 416, 429, 500, 503])
headers = st.dictionaries(
    st.sampled_from(["Retry-After", "WWW-Authenticate", "X-Request-Id", "Range"]),
    st.text(max_size=40),
    max_size=3,
)
REQUEST = wire.Request("GET", "https://api.example/video/x1")


def only_vidapi_errors(fn: Any, *args: Any, **kw: Any) -> None:
    with contextlib.suppress(va.VidapiError):
        fn(*args, **kw)


@SETTINGS
@given(statuses, headers, bodies)
def test_decoding_any_answer_gives_data_or_a_vidapi_error(
    status: int, hdrs: dict[str, str], body: bytes
) -> None:
    only_vidapi_errors(wire.decode_api_response, REQUEST, status, hdrs, body)
    only_vidapi_errors(wire.decode_oauth_response, REQUEST, status, hdrs, body)
    only_vidapi_errors(wire.decode_upload_response, status, body)


@SETTINGS
@given(
    json_values | objects,
    st.sampled_from([Video, UploadedFile, UploadSession, UploadProgress, Subtitle]),
)
def test_structuring_any_json_gives_a_model_or_a_vidapi_error(data: Any, cls: type) -> None:
    try:
        result = structure(data, cls, what="test")
    except va.UnexpectedResponseError:
        return
    assert isinstance(result, cls)
    if cls is Video:
        assert isinstance(result.id, str) and result.id  # never a video without an id


@SETTINGS
@given(st.text(min_size=1, max_size=80))
def test_any_file_name_makes_headers_http_can_carry(name: str) -> None:
    disposition = attachment_disposition(name)
    assert disposition.isascii() and disposition.isprintable()
    head, _tail = multipart_envelope("b0undary", "file", name)
    lines = head.split(b"\r\n")
    assert len(lines) == 5 and lines[3:] == [b"", b""]  # boundary, 2 headers, blank line
    for line in lines[:3]:
        assert not re.search(rb"[\x00-\x1f\x7f]", line)


@SETTINGS
@given(st.text(min_size=1, max_size=200))
def test_any_job_key_makes_a_tag_the_client_accepts(key: str) -> None:
    tag = _tag(key)
    assert re.fullmatch(r"vidapih?-[A-Za-z0-9_-]{1,80}", tag)  # vidapih-: a hashed key
    if re.fullmatch(r"[A-Za-z0-9_-]{1,80}", key):
        assert tag == f"vidapi-{key}"  # readable keys stay readable


@SETTINGS
@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_distinct_keys_make_distinct_tags(a: str, b: str) -> None:
    if a != b:
        assert _tag(a) != _tag(b)


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@SETTINGS
@given(
    st.booleans(),
    st.booleans(),
    st.integers(min_value=0, max_value=10**6),
    st.text(max_size=20),
    st.text(max_size=30),
)
def test_embed_params_round_trip_through_the_iframe(
    autoplay: bool, mute: bool, start: int, quality: str, title: str
) -> None:
    params = embed.PlayerParams(autoplay=autoplay, mute=mute, start=start, quality=quality)
    url = embed.iframe_url("x84sh87", params)
    query = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
    assert query == {
        "autoplay": "1" if autoplay else "0",
        "mute": "1" if mute else "0",
        "start": str(start),
        "quality": quality,
    }
    parser = _Tags()
    parser.feed(embed.iframe_html("x84sh87", params, title=title or None))
    [(tag, attrs)] = parser.tags
    assert tag == "iframe"
    assert attrs["src"] == url  # whatever the quality text, the attribute is not broken out of
    assert attrs.get("title") == (title or None)


_QUERY_TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
_PATH = st.text(
    alphabet=st.sampled_from("/?#\t\n%.:@ aé") | st.characters(codec="utf-8"), max_size=20
).map(lambda p: p if p.startswith("0") else "/" + p)


@given(
    base=st.sampled_from(
        ["https://api.example.com", "https://api.example.com/rest/", "http://127.0.0.1:8080"]
    ),
    path=_PATH,
    query=st.lists(st.tuples(_QUERY_TEXT, _QUERY_TEXT), max_size=3),
)
def test_api_requests_what_and_origin_are_the_urls_own(
    base: str, path: str, query: list[tuple[str, str]]
) -> None:
    """What ``api_request`` works out without parsing (the query's encoding, the name of
    the request, the origin that decides where the token goes) is what the standard
    library reads in the url it builds."""
    request = wire.api_request(base, "GET", path, query=query)
    q = urllib.parse.urlencode(query, safe=",")
    assert request.url == base.rstrip("/") + path + (f"?{q}" if q else "")
    assert request.what == f"GET {urllib.parse.urlsplit(request.url).path}"
    api = wire.origin(base)
    try:
        same = wire.origin(request.url) == api
    except ValueError:  # not a url at all (a path without its "/"): nothing is sent
        with pytest.raises(ValueError, match="Port"):
            request.headers("tok-123", api)
        return
    assert ("Authorization" in request.headers("tok-123", api)) == same
