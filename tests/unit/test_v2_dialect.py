"""The API v2 dialect module, as pure functions: requests as data, answers into the
legacy mappings, errors into the exception tree. No event loop, no socket. Expected
bodies and values are written out by hand from the spec, not computed by the module."""

from __future__ import annotations

import datetime as dt
import json

import pytest

import vidapi_async as va
from vidapi_async._convert import structure
from vidapi_async._protocol import _v2 as v2
from vidapi_async._protocol import origin

BASE = "https://api.example.test/v2"
ORIGIN = origin(BASE)


def body_of(request: object) -> object:
    raw = getattr(request, "json_body", None)
    assert isinstance(raw, bytes)
    return json.loads(raw)


# --- requests -------------------------------------------------------------------------------


def test_upload_session_is_a_post_without_a_body_under_the_root() -> None:
    r = v2.upload_session(BASE)
    assert (r.method, r.url, r.scope) == ("POST", f"{BASE}/files/upload_sessions", "video.manage")
    assert r.payload() is None
    assert "Content-Type" not in r.headers("tok", ORIGIN)
    assert v2.upload_session_from(
        {"upload_url": "https://u/x?seal=s", "progress_url": "p"}, "w"
    ) == {
        "upload_url": "https://u/x?seal=s",
        "progress_url": "p",
    }
    with pytest.raises(va.UnexpectedResponseError, match="upload_url"):
        v2.upload_session_from({"progress_url": "p"}, "POST /v2/files/upload_sessions")


def test_create_video_sends_json_with_the_renames_and_the_file_as_source() -> None:
    r = v2.create_video(
        BASE,
        "prof1",
        "https://up.test/files/abc.mp4#frag",
        {
            "title": "Été",
            "channel": "news",
            "is_created_for_kids": False,
            "published": True,
            "description": "d",
            "tags": "a, b",
            "language": "fr",
            "explicit": True,
            "publish_date": 1780315200,
            "geoblocking": ["deny", "us", "ca"],
        },
    )
    assert (r.method, r.url) == ("POST", f"{BASE}/profiles/prof1/videos")
    assert r.scope == "video.manage" and not r.idempotent
    assert r.headers("tok", ORIGIN)["Content-Type"] == "application/json"
    assert r.headers("tok", ORIGIN)["Authorization"] == "Bearer tok"
    assert r.form is None
    assert body_of(r) == {
        "title": "Été",
        "category": "news",
        "is_for_kids": False,
        "description": "d",
        "tags": ["a", "b"],
        "language": "fr",
        "is_explicit": True,
        "published_at": "2026-06-01T12:00:00Z",
        "geo_restriction": {"mode": "deny", "countries": ["US", "CA"]},
        "visibility": "public",
        "source": {"file_url": "https://up.test/files/abc.mp4#frag"},
    }
    assert r.payload() == r.json_body
    assert "Été".encode() in (r.payload() or b"")  # UTF-8 JSON, not \\u escapes


def test_create_requires_title_and_channel_and_defaults_what_v2_requires() -> None:
    with pytest.raises(va.InvalidArgumentError, match="channel"):
        v2.create_video(BASE, "p", "u", {"title": "t"})
    r = v2.create_video(BASE, "p", "u", {"title": "t", "channel": "fun"})
    assert body_of(r) == {
        "title": "t",
        "category": "fun",
        "visibility": "public",
        "is_for_kids": False,
        "source": {"file_url": "u"},
    }


@pytest.mark.parametrize(
    ("given", "current", "expected"),
    [
        ({"password": "s3cret"}, None, {"visibility": "password", "password": "s3cret"}),
        ({"private": True}, None, {"visibility": "private"}),
        ({"private": False}, "private", {"visibility": "public"}),
        ({"private": False}, "password", None),
        ({"published": False}, None, {"visibility": "private"}),
        ({"published": True}, "private", None),
        ({"published": True}, "password", None),
        ({"password": None}, "password", {"visibility": "private"}),
        ({"password": None}, "public", None),
        ({"password": None, "private": True}, None, {"visibility": "private"}),
        ({"title": "only"}, None, {"title": "only"}),
        ({"title": "t", "published": True}, "private", {"title": "t"}),
    ],
)
def test_patch_sends_only_what_is_given_and_the_visibility_rule(
    given: dict[str, object], current: str | None, expected: dict[str, object] | None
) -> None:
    r = v2.update_video(BASE, "x1", given, current)
    if expected is None:
        assert r is None
        return
    assert r is not None
    assert (r.method, r.url, r.scope) == ("PATCH", f"{BASE}/videos/x1", "video.manage")
    assert body_of(r) == expected


def test_an_update_that_depends_on_the_current_visibility_needs_it() -> None:
    with pytest.raises(ValueError, match="current visibility"):
        v2.update_video(BASE, "x1", {"published": True})


def test_a_password_is_kept_out_of_repr_and_listed_as_a_secret() -> None:
    r = v2.update_video(BASE, "x1", {"password": "hunter22"})
    assert r is not None
    assert "hunter22" not in repr(r)
    assert r.secret_values() == ("hunter22",)


@pytest.mark.parametrize(
    ("given", "argument"),
    [
        ({"password": "p", "private": True}, "password"),
        ({"password": "x" * 33}, "password"),
        ({"is_created_for_kids": 1}, "is_created_for_kids"),
        ({"explicit": "true"}, "explicit"),
        ({"published": 0}, "published"),
        ({"geoblocking": ["allow", "france"]}, "geoblocking"),
        ({"publish_date": dt.datetime(2026, 1, 1)}, "publish_date"),
        ({"publish_date": True}, "publish_date"),
        ({"colour": "red"}, "colour"),
        ({}, "metadata"),
    ],
)
def test_bad_metadata_is_refused_before_anything_is_built(
    given: dict[str, object], argument: str
) -> None:
    with pytest.raises(va.InvalidArgumentError) as info:
        v2.update_video(BASE, "x1", given)
    assert info.value.argument == argument


def test_an_aware_datetime_is_sent_in_utc() -> None:
    paris = dt.timezone(dt.timedelta(hours=2))
    r = v2.update_video(BASE, "x1", {"publish_date": dt.datetime(2026, 6, 1, 14, tzinfo=paris)})
    assert r is not None
    assert body_of(r) == {"published_at": "2026-06-01T12:00:00Z"}


def test_fields_v2_lacks_and_operations_it_lacks_are_typed_errors_naming_both() -> None:
    with pytest.raises(va.UnsupportedOperationError) as info:
        v2.update_video(BASE, "x1", {"expiry_date": 1780315200})
    assert info.value.dialect == "v2"
    assert "expiry_date" in info.value.operation and "update_video" in info.value.operation
    for operation in ("upload_subtitle", "set_thumbnail", "make_live"):
        with pytest.raises(va.UnsupportedOperationError, match=rf"{operation} .*API v2"):
            v2.unsupported(operation)
    v2.unsupported("create_video")  # offered: no error
    assert isinstance(va.UnsupportedOperationError("a", "v2", "b"), va.UsageError)


def test_reads_ask_for_the_v2_names_and_ids_are_one_segment() -> None:
    r = v2.get_video(BASE, "x7", ["id", "title", "channel", "published", "mode", "duration"])
    assert r.url == f"{BASE}/videos/x7?fields=video_id,title,category,is_published,source.duration"
    assert r.scope == "video.read"
    with pytest.raises(va.InvalidArgumentError, match="video_id"):
        v2.get_video(BASE, "../me", ["id"])
    r = v2.delete_video(BASE, "x7")
    assert (r.method, r.url, r.payload()) == ("DELETE", f"{BASE}/videos/x7", None)


def test_list_pages_oldest_first_with_page_size_always_sent() -> None:
    r = v2.list_videos(BASE, "p1", ["id"], page_size=50, tag="t-1")
    assert r.url == (
        f"{BASE}/profiles/p1/videos?fields=video_id&sort=created_at&page=1&page_size=50&tags=t-1"
    )
    with pytest.raises(va.InvalidArgumentError, match="page_size"):
        v2.list_videos(BASE, "p1", ["id"], page_size=101)


# --- answers ------------------------------------------------------------------------------

V2_VIDEO = {
    "video_id": "x9abc",
    "title": "A title",
    "category": "news",
    "is_for_kids": False,
    "is_explicit": True,
    "is_published": True,
    "visibility": "private",
    "description": "d",
    "tags": ["a"],
    "language": "en",
    "created_at": "2026-06-01T12:00:00Z",
    "published_at": "2026-06-01T12:00:00+02:00",
    "video_url": "https://www.example.test/video/k7Gh2x",
    "geo_restriction": {"mode": "allow", "countries": ["FR", "DE"]},
    "profile": {"profile_id": "prof1", "display_name": "P"},
    "source": {"duration": 37},
    "embedding": {"embed_url": "https://e/embed/video/x9abc", "embed_html": "<iframe>"},
    "thumbnail": {"h720_url": "https://t/720.jpg"},
    "processing": {"status": "processing", "progress": 40},
    "hashtags": ["#x"],
}


def test_a_v2_video_reads_as_the_legacy_mapping() -> None:
    out = v2.video_from(V2_VIDEO)
    assert out["id"] == "x9abc" and out["channel"] == "news"
    assert out["is_created_for_kids"] is False and out["explicit"] is True
    assert out["published"] is True and out["private"] is True
    assert out["password_protected"] is False
    assert out["created_time"] == 1780315200
    assert out["publish_date"] == 1780308000
    assert out["url"] == "https://www.example.test/video/k7Gh2x"
    assert out["private_id"] == "k7Gh2x"
    assert out["geoblocking"] == ["allow", "fr", "de"]
    assert out["owner"] == "prof1" and out["duration"] == 37
    assert out["embed_url"] == "https://e/embed/video/x9abc"
    assert out["thumbnail_url"] == "https://t/720.jpg"
    assert (out["status"], out["encoding_progress"]) == ("processing", 40)
    assert out["hashtags"] == ["#x"]  # no legacy name: kept under its own
    assert "video_id" not in out and "category" not in out


def test_the_legacy_mapping_fills_the_existing_video_model() -> None:
    video = structure(v2.video_from(V2_VIDEO), va.Video, what="GET /v2/videos/x9abc")
    assert video.id == "x9abc"
    assert (video.title, video.channel, video.owner) == ("A title", "news", "prof1")
    assert video.published is True and video.password_protected is False
    assert video.status == "processing" and video.encoding_progress == 40
    assert not video.is_ready


@pytest.mark.parametrize("bad", ["2026-06-01", "yesterday", 1780315200, "2026-06-01T12:00:00"])
def test_a_time_that_is_not_iso_8601_is_an_unexpected_response(bad: object) -> None:
    with pytest.raises(va.UnexpectedResponseError, match="created_at"):
        v2.video_from({"video_id": "x1", "created_at": bad})


def test_iso_and_unix_seconds_both_ways() -> None:
    assert v2.iso_from_unix(0, "t") == "1970-01-01T00:00:00Z"
    assert v2.iso_from_unix(1780315200.9, "t") == "2026-06-01T12:00:00Z"
    assert v2.unix_from_iso("2026-06-01T12:00:00.250Z", "t") == 1780315200
    assert v2.unix_from_iso("2026-06-01T14:00:00+0200", "t") == 1780315200
    assert v2.unix_from_iso(None, "t") is None


def test_paging_reads_data_and_next_at_the_top_or_in_pagination() -> None:
    items, nxt = v2.page_items({"data": [{"video_id": "x1"}], "next": f"{BASE}/n?page=2"}, "w")
    assert items == [{"video_id": "x1"}] and nxt == f"{BASE}/n?page=2"
    items, nxt = v2.page_items({"data": [], "pagination": {"next": None}}, "w")
    assert (items, nxt) == ([], None)
    with pytest.raises(va.UnexpectedResponseError, match="data"):
        v2.page_items({"list": []}, "w")


def test_next_is_followed_as_given_but_never_off_the_api_or_in_a_loop() -> None:
    first = v2.list_videos(BASE, "p1", ["id"])
    follow = v2.next_page(first, f"{BASE}/profiles/p1/videos?page=2&cursor=%2Fab")
    assert follow.url == f"{BASE}/profiles/p1/videos?page=2&cursor=%2Fab" and follow.exact_url
    assert follow.scope == "video.read"
    with pytest.raises(va.UnexpectedResponseError, match="another host"):
        v2.next_page(first, "https://elsewhere.test/v2/x?page=2")
    with pytest.raises(va.UnexpectedResponseError, match="already read"):
        v2.next_page(follow, first.url, seen=[first.url])


def test_a_204_decodes_to_an_empty_mapping() -> None:
    r = v2.update_video(BASE, "x1", {"title": "t"})
    assert r is not None
    assert v2.decode_api_response(r, 204, {}, b"") == {}
    assert v2.decode_api_response(r, 200, {}, b'{"a": 1}') == {"a": 1}


def v2_error(code: str, message: str = "m", correlation: str | None = "c-1") -> bytes:
    return json.dumps(
        {
            "error": {
                "code": code,
                "message": message,
                "correlation_id": correlation,
                "details": {"reason": "object_not_found", "object_id": "x1"},
                "documentation_url": "https://docs.example.test/errors",
            }
        }
    ).encode()


def test_confirmed_codes_map_into_the_tree_with_the_correlation_id_shown() -> None:
    r = v2.get_video(BASE, "x1", ["id"])
    err = v2.api_error(r, 404, {}, v2_error("RESOURCE_NOT_FOUND", "Video x1 not found."))
    assert type(err) is va.NotFoundError
    assert err.correlation_id == "c-1" and "[correlation c-1]" in str(err)
    assert err.error_type == "RESOURCE_NOT_FOUND" and err.reason == "object_not_found"
    assert str(err).startswith("GET /v2/videos/x1: Video x1 not found.")
    err = v2.api_error(r, 403, {}, v2_error("MISSING_PERMISSIONS"))
    assert isinstance(err, va.InsufficientScopeError) and err.scope == "video.read"
    unscoped = v2.next_page(r, f"{BASE}/x?page=2")
    unscoped = type(unscoped)("GET", unscoped.url)
    assert type(v2.api_error(unscoped, 403, {}, v2_error("MISSING_PERMISSIONS"))) is (
        va.ForbiddenError
    )


def test_an_unknown_code_is_a_plain_api_error_carrying_it() -> None:
    r = v2.get_video(BASE, "x1", ["id"])
    err = v2.api_error(r, 409, {}, v2_error("SOMETHING_NEW", correlation=None))
    assert type(err) is va.APIError
    assert err.error_type == "SOMETHING_NEW" and err.correlation_id is None
    assert "correlation" not in str(err)
    with pytest.raises(va.APIError) as info:
        v2.decode_api_response(r, 418, {}, v2_error("TEAPOT"))
    assert type(info.value) is va.APIError


def test_statuses_decide_for_token_throttling_and_server_errors() -> None:
    r = v2.get_video(BASE, "x1", ["id"])
    assert type(v2.api_error(r, 401, {}, v2_error("WHATEVER"))) is va.InvalidTokenError
    limited = v2.api_error(r, 429, {"Retry-After": "7"}, v2_error("X"))
    assert isinstance(limited, va.RateLimitedError) and limited.retry_after == 7.0
    assert type(v2.api_error(r, 503, {}, b"<html>down</html>")) is va.ServerError


def test_a_password_echoed_in_an_error_is_masked() -> None:
    r = v2.update_video(BASE, "x1", {"password": "hunter22"})
    assert r is not None
    body = v2_error("INVALID_PARAMETER", "password hunter22 refused")
    err = v2.api_error(r, 400, {}, body, secrets=r.secret_values())
    assert isinstance(err, va.InvalidParameterError)
    assert "hunter22" not in str(err) and "hunter22" not in json.dumps(err.body)


# --- me, profiles, scopes -------------------------------------------------------------------


def test_one_profile_is_used_several_without_a_choice_are_an_error_naming_them() -> None:
    one = {"user_id": "u1", "profiles": [{"profile_id": "p1", "name": "Main"}]}
    two = {"profiles": [{"profile_id": "p1", "name": "Main"}, {"profile_id": "p2", "name": "B"}]}
    assert v2.choose_profile(one, None) == "p1"
    assert v2.choose_profile(two, "p2") == "p2"
    with pytest.raises(va.InvalidArgumentError, match=r"p1 \(Main\), p2 \(B\)"):
        v2.choose_profile(two, None)
    with pytest.raises(va.InvalidArgumentError, match="'p9' is not yours"):
        v2.choose_profile(two, "p9")
    with pytest.raises(va.InvalidArgumentError, match="no profile"):
        v2.choose_profile({"profiles": []}, None)
    assert v2.user_from({"user_id": "u1", "username": "n"}) == {"id": "u1", "username": "n"}
    assert v2.me(BASE).url == f"{BASE}/me" and v2.me(BASE).scope == "account.read"


def test_scopes_are_mapped_to_v2_names_and_bundles_expanded() -> None:
    mapped = v2.v2_scopes(["manage_videos", "video.read", "bundle.user"])
    assert mapped[:2] == ("video.manage", "video.read") and mapped[-1] == "bundle.user"
    assert len(mapped) == len(set(mapped))  # video.read once
    # uploads (with the profile lookup), live and webhooks, as in the legacy API
    wanted = "account.read live.manage live.read profile.manage profile.read".split()
    assert set(wanted) <= set(mapped)
    with pytest.raises(va.InvalidArgumentError, match="manage_subtitles"):
        v2.v2_scopes(["manage_subtitles"])
    assert {"video.manage", "profile.manage", "bundle.user"} <= v2.expand_scopes(["bundle.user"])
    assert "player.manage" not in v2.expand_scopes(["bundle.user"])
    # a bundle's manage scopes come with their read ones (UNCONFIRMED)
    assert {"account.read", "live.read"} <= v2.expand_scopes(["bundle.user"])
    assert "player.read" in v2.expand_scopes(["bundle.publisher"])
    assert v2.token_url_for("https://api.dailymotion.com/v2/") == v2.TOKEN_URL
    assert v2.token_url_for("http://127.0.0.1:9/v2") == "http://127.0.0.1:9/v2/token"


# --- playlists, players, webhooks -----------------------------------------------------------


def test_playlists_players_and_webhooks_speak_v2() -> None:
    r = v2.create_playlist(BASE, "p1", "Mix", private=True)
    assert (r.method, r.url) == ("POST", f"{BASE}/profiles/p1/playlists")
    assert body_of(r) == {"title": "Mix", "visibility": "private"}
    r = v2.add_playlist_video(BASE, "pl1", "x1")
    assert (r.url, body_of(r)) == (f"{BASE}/playlists/pl1/videos", {"video_id": "x1"})
    assert body_of(v2.playlist_request(BASE, "PATCH", "pl1", description="d")) == {
        "description": "d"
    }
    pl = v2.playlist_from({"playlist_id": "pl1", "title": "Mix", "visibility": "public"})
    assert structure(pl, va.Playlist, what="w") == va.Playlist(
        id="pl1", name="Mix", private=False, fields=pl
    )
    r = v2.create_player(BASE, "p1", "Main")
    assert (r.url, body_of(r)) == (f"{BASE}/profiles/p1/players", {"name": "Main"})
    r = v2.player_request(BASE, "PATCH", "pl9", {"label": "New"})
    assert (r.method, body_of(r)) == ("PATCH", {"name": "New"})
    assert v2.player_from({"player_id": "pl9", "name": "N"}) == {"id": "pl9", "label": "N"}
    r = v2.set_webhook(BASE, "p1", "https://h.test/cb", ["video.created"])
    assert (r.method, r.url, r.scope) == ("PATCH", f"{BASE}/profiles/p1", "profile.manage")
    assert body_of(r) == {
        "webhook": {"callback_url": "https://h.test/cb", "events": ["video.created"]}
    }
    assert body_of(v2.set_webhook(BASE, "p1", None)) == {"webhook": None}
    assert v2.webhook_from({"webhook": {"callback_url": "u", "events": ["a"]}}) == {
        "url": "u",
        "events": ["a"],
    }
