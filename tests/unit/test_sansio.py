import enum
import json
import urllib.parse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vidapi_async as va
from tests.examples import examples
from vidapi_async import _protocol as wire

REQ = wire.api_request("https://api.example.com/rest", "POST", "/me/videos", form=[("a", "b")])


def body(**error: object) -> bytes:
    return json.dumps({"error": error}).encode()


def test_api_request_keeps_the_base_path_and_encodes_the_query() -> None:
    r = wire.api_request(
        "https://h.example/rest/", "GET", "/video/x1", query=[("fields", "id,title")]
    )
    assert r.url == "https://h.example/rest/video/x1?fields=id,title"
    assert r.what == "GET /rest/video/x1"
    assert REQ.encoded_form() == b"a=b"


def test_api_request_is_the_request_attrs_would_build() -> None:
    """``api_request`` fills the ``Request`` without attrs' ``__init__`` (issue 43): the
    object is the one ``Request(...)`` makes, every field, the hidden ones too."""
    origin = wire.origin("https://h.example/rest")
    for method, path, form, scope, idempotent in (
        ("GET", "/video/x1", None, None, True),
        ("POST", "/me/videos", [("title", "a b")], "manage_videos", False),
    ):
        made = wire.api_request(
            "https://h.example/rest/",
            method,
            path,
            query=[("fields", "id,title")],
            form=form,
            scope=scope,
            idempotent=idempotent,
        )
        built = wire.Request(
            method,
            f"https://h.example/rest{path}?fields=id,title",
            form=None if form is None else tuple(form),
            scope=scope,
            idempotent=idempotent,
            url_origin=origin,
            known_what=f"{method} /rest{path}",
        )
        assert type(made) is wire.Request
        assert made == built
        assert vars(made) == vars(built)
    # a path that is not plain: its origin and name are worked out from the url
    odd = wire.api_request("https://h.example/", "GET", "/a?b")
    assert (odd.url_origin, odd.known_what) == (None, None)
    assert odd.what == "GET /a"


@pytest.mark.parametrize("base", ["https://h.example/rest/", "http://127.0.0.1:8080"])
@pytest.mark.parametrize("names", ["id,title", "id,owner.screenname", "a b"])
def test_a_video_read_is_the_request_api_request_builds(base: str, names: str) -> None:
    """The legacy read of a video, built without ``api_request`` (issue 43), is the
    request it builds, every field; an id that is not plain letters and digits goes
    through it."""
    from vidapi_async._protocol import _legacy

    for scope in (None, "manage_videos"):
        fast = _legacy.get_video(base, "x8abc12", names, scope)
        slow = wire.api_request(
            base, "GET", "/video/x8abc12", query=[("fields", names)], scope=scope
        )
        assert vars(fast) == vars(slow)
    odd = _legacy.get_video(base, "x\u00e9", names)
    assert vars(odd) == vars(
        wire.api_request(base, "GET", "/video/x\u00e9", query=[("fields", names)])
    )


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(st.text(), st.text()), max_size=6))
def test_a_form_is_encoded_as_urlencode_writes_it(pairs: list[tuple[str, str]]) -> None:
    """Byte for byte what ``urlencode`` wrote (the encoder before plain names and values
    skipped it), and it parses back to the same pairs."""
    try:
        expected = urllib.parse.urlencode(pairs).encode("ascii")
    except UnicodeEncodeError:  # a lone surrogate: not encodable either way
        with pytest.raises(UnicodeEncodeError):
            wire.api_request("https://h/", "POST", "/x", form=pairs).encoded_form()
        return
    encoded = wire.api_request("https://h/", "POST", "/x", form=pairs).encoded_form()
    assert encoded == expected
    assert urllib.parse.parse_qsl(encoded.decode(), keep_blank_values=True) == pairs


class _Mixed(str, enum.Enum):  # noqa: UP042 - the mixin is the case at stake
    NEWS = "news"
    SPACED = "a b"


class _Str(enum.StrEnum):
    NEWS = "news"
    SPACED = "a b"


@pytest.mark.parametrize("value", [_Mixed.NEWS, _Mixed.SPACED, _Str.NEWS, _Str.SPACED])
def test_str_subclasses_are_encoded_as_urlencode_writes_them_whatever_came_before(
    value: str,
) -> None:
    """A str subclass (an Enum member) is written as ``urlencode`` writes it, ``str()``
    of it, in a query and in a form alike; before, the query's quoting cache, keyed by
    equality, gave whichever equal value was quoted first (``_Str.NEWS`` for
    ``_Mixed.NEWS``), and a form wrote the member's value."""
    for before in (_Str.NEWS, _Mixed.NEWS, "news", _Str.SPACED, _Mixed.SPACED, "a b"):
        wire.api_request("https://h/", "GET", "/x", query=[("channel", before)])
        query = wire.api_request("https://h/", "GET", "/x", query=[("channel", value)])
        expected = urllib.parse.urlencode([("channel", value)], safe=",")
        assert query.url == f"https://h/x?{expected}"
    form = wire.api_request("https://h/", "POST", "/x", form=[(value, value)]).encoded_form()
    assert form == urllib.parse.urlencode([(value, value)]).encode("ascii")


class _Shown(str):
    """Equal to any other of its kind with the same value, unhashable, and written as
    what it was told to show."""

    def __new__(cls, value: str, shown: str) -> "_Shown":
        made = super().__new__(cls, value)
        made.shown = shown  # type: ignore[attr-defined]
        return made

    def __str__(self) -> str:
        return self.shown  # type: ignore[attr-defined,no-any-return]

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]


def test_a_str_subclass_of_its_own_kind_is_written_as_its_str() -> None:
    """The quoting cache sees only plain str: an unhashable subclass is no TypeError, and
    two equal ones that show differently each write their own text (before: the first's)."""
    for shown in ("x y", "z"):
        value = _Shown("v", shown)
        query = wire.api_request("https://h/", "GET", "/x", query=[("k", value)])
        assert query.url == "https://h/x?" + urllib.parse.urlencode([("k", value)], safe=",")


@pytest.mark.parametrize(
    ("status", "error_type", "cls"),
    [
        (400, "invalid_parameter", va.InvalidParameterError),
        (400, "missing_required_parameter", va.MissingParameterError),
        (400, "other", va.BadRequestError),
        (401, "invalid_token", va.InvalidTokenError),
        (401, "unauthorized", va.AuthenticationError),
        (403, "access_forbidden", va.ForbiddenError),
        (404, "not_found", va.NotFoundError),
        (409, "conflict", va.APIError),
        (500, "server_error", va.ServerError),
        (502, None, va.ServerError),
    ],
)
def test_error_statuses_and_types_map_to_classes(
    status: int, error_type: str | None, cls: type
) -> None:
    raw = body(code=status, message="nope", type=error_type)
    with pytest.raises(va.APIError) as info:
        wire.decode_api_response(REQ, status, {}, raw)
    assert type(info.value) is cls
    assert info.value.status == status
    assert "nope" in str(info.value)
    assert "POST /rest/me/videos" in str(info.value)


def test_a_403_on_a_scoped_request_is_insufficient_scope() -> None:
    scoped = wire.api_request("https://a.example", "POST", "/me/videos", scope="manage_videos")
    err = wire.api_error(scoped, 403, {}, body(type="access_forbidden", message="no"))
    assert isinstance(err, va.InsufficientScopeError)
    assert err.scope == "manage_videos"


def test_invalid_token_is_read_from_www_authenticate() -> None:
    headers = {"WWW-Authenticate": 'Bearer error="invalid_token", error_description="expired"'}
    err = wire.api_error(REQ, 401, headers, b"")
    assert isinstance(err, va.InvalidTokenError)


def test_rate_limit_carries_retry_after_and_reason() -> None:
    raw = body(type="rate_limit", message="slow down", error_data={"reason": "throttled"})
    err = wire.api_error(REQ, 429, {"Retry-After": "7"}, raw)
    assert isinstance(err, va.RateLimitedError)
    assert err.retry_after == 7.0
    assert err.reason == "throttled"


def test_retry_after_as_http_date() -> None:
    assert wire.parse_retry_after("Thu, 01 Jan 1970 00:01:40 GMT", now=40.0) == 60.0
    assert wire.parse_retry_after("soon") is None
    assert wire.parse_retry_after(None) is None


def test_non_json_error_body_still_gives_a_typed_error() -> None:
    err = wire.api_error(REQ, 502, {}, b"<html>Bad gateway</html>")
    assert isinstance(err, va.ServerError)
    assert "Bad gateway" in err.message


def test_a_success_that_is_not_json_is_unexpected() -> None:
    with pytest.raises(va.UnexpectedResponseError):
        wire.decode_api_response(REQ, 200, {}, b"[1, 2]")


def test_secrets_echoed_by_the_server_are_redacted() -> None:
    raw = body(type="invalid_parameter", message="bad password hunter2 for token tok123")
    err = wire.api_error(REQ, 400, {}, raw, secrets=["hunter2", "tok123"])
    assert "hunter2" not in str(err) and "tok123" not in str(err)
    assert "hunter2" not in repr(err)


def test_oauth_errors() -> None:
    token_req = wire.Request("POST", "https://a.example/oauth/token", authenticated=False)
    raw = json.dumps({"error": "invalid_grant", "error_description": "bad password"}).encode()
    with pytest.raises(va.OAuthError) as info:
        wire.decode_oauth_response(token_req, 400, {}, raw)
    assert info.value.error_type == "invalid_grant"
    assert "bad password" in str(info.value)


@pytest.mark.parametrize(
    ("raw", "message", "code"),
    [
        (b'{"error": "missing file"}', "missing file", None),
        (b'{"error": {"message": "too big", "code": 413}}', "too big", 413),
    ],
)
def test_upload_errors_in_both_forms(raw: bytes, message: str, code: int | None) -> None:
    with pytest.raises(va.UploadRejectedError) as info:
        wire.decode_upload_response(400, raw)
    assert info.value.message == message
    assert info.value.code == code
    assert isinstance(info.value, va.UploadError)


def test_origin_makes_default_ports_explicit() -> None:
    assert wire.origin("https://API.example.com/x") == wire.origin("https://api.example.com:443/")
    assert wire.origin("https://api.example.com") != wire.origin("http://api.example.com")
    assert wire.origin("https://api.example.com") != wire.origin("https://upload.example.com")


def test_url_for_humans_drops_the_seal() -> None:
    shown = wire.url_for_humans("https://up.example/upload?uuid=u&seal=SECRET")
    assert shown == "https://up.example/upload"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32"])
def test_a_json_answer_is_read_in_every_encoding_json_allows(encoding: str) -> None:
    answer = '{"title": "Été à Paris", "n": 1}'.encode(encoding)
    data = wire.decode_api_response(REQ, 200, {}, answer)
    assert data == {"title": "Été à Paris", "n": 1}


@pytest.mark.parametrize("answer", [b"", b"  \r\n"])
def test_an_empty_success_is_an_empty_object(answer: bytes) -> None:
    assert wire.decode_api_response(REQ, 200, {}, answer) == {}


def test_a_bearer_token_the_server_echoes_cut_short_is_masked() -> None:
    """The attack on issue 41 (F9): a server refusing an oversized header echoed its
    start (``Got more than 8190 bytes when reading: b'Bearer SECRETPREFIX-yyy...'``),
    which no whole-secret match catches; it reached stderr, the report and the journal.
    Whatever follows ``Bearer`` in a server's text is masked."""
    token = "SECRETPREFIX-" + "y" * 9000
    echoed = f"Got more than 8190 bytes when reading: b'Bearer {token[:80]}...'."
    request = wire.Request("GET", "https://api.example.test/video/x1", authenticated=True)
    err = wire.api_error(request, 400, {}, echoed.encode(), secrets=(token,))
    for text in (str(err), err.message, repr(err)):
        assert "SECRETPREFIX" not in text, text
    assert "Bearer ***" in err.message
    other = wire.api_error(request, 400, {}, b"a Bearer of news", secrets=(token,))
    assert "a Bearer of news" in str(other)  # a word, not a token
    # a start of the secret, echoed without its scheme, is masked too
    bare = wire.api_error(request, 400, {}, f"seen {token[:40]}... here".encode(), secrets=(token,))
    assert "SECRETPREFIX" not in str(bare) and "seen ***" in str(bare)
