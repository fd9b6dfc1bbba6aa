"""The platform's rules, apart from HTTP (moto's models/responses split): accounts and
tokens, upload addresses and their seals, ownership, what a video is at creation, who
may read or change what, passwords, live streams, processing, quotas.

Handlers parse a request, call in here and turn the result (or the ``ApiError``) into
an answer. Nothing here imports aiohttp, and nothing here comes from the client
package: the emulator is a second implementation of the platform, written from its
documentation, so that it can disagree with the client.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import attrs

from ._failure import ApiError
from ._state import State, new_id

__all__ = ["ALL_SCOPES", "CHANNELS", "Account", "Backend"]

ALL_SCOPES = (
    "email",
    "userinfo",
    "manage_videos",
    "manage_playlists",
    "manage_players",
    "manage_subtitles",
    "manage_likes",
    "manage_podcasts",
    "manage_subscriptions",
)

CHANNELS = frozenset(
    "animals auto creation fun kids lifestyle music news people school shortfilms sport "
    "tech travel tv videogames webcam".split()
)
"""The category slugs the platform documents."""

VIDEO_DEFAULT_FIELDS = ("id", "title", "channel", "owner")
VIDEO_FIELDS = frozenset(
    "id title channel owner published mode password password_protected status url "
    "created_time is_created_for_kids description encoding_progress publishing_progress "
    "duration embed_url embed_html thumbnail_url private start_time end_time onair "
    "live_publish_url live_airing_time live_auto_record record_status audience "
    "stream_live_hls_url item_type tags language explicit publish_date expiry_date "
    "geoblocking private_id views_total".split()
)
OWNER_ONLY = frozenset({"live_publish_url"})
"""Fields only the owner may read: asking for them on another's video is a 403."""
WRITABLE = frozenset(
    "title channel published password mode description start_time end_time "
    "is_created_for_kids live_auto_record private tags thumbnail_url language explicit "
    "publish_date expiry_date geoblocking".split()
)
MAX_DESCRIPTION = 3000
"""The platform's limit on a description, in characters."""
USER_FIELDS = frozenset(
    {"id", "screenname", "username", "fullname", "webhook_url", "webhook_events"}
)
USER_DEFAULT_FIELDS = ("id", "screenname")
SUBTITLE_FIELDS = frozenset({"id", "format", "language", "language_label", "url", "item_type"})
LANGUAGE_LABELS = {"en": "English", "fr": "Français", "de": "Deutsch", "es": "Español"}

_LANGUAGE = re.compile(r"[a-z]{2,3}")
_LANGUAGE_1 = re.compile(r"[a-z]{2}")
"""A video's language: ISO 639-1, two letters."""
_COUNTRY = re.compile(r"[a-z]{2}")
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
MAX_TIMESTAMP = 253402300799
"""The last second of the year 9999: later "timestamps" are refused."""
_BOOLS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


@attrs.frozen
class Account:
    """A user of the emulated platform."""

    username: str
    password: str = attrs.field(repr=False)
    fullname: str

    @property
    def id(self) -> str:
        return "x" + "".join(c for c in self.username.lower() if c.isalnum())[:10] + "u"


def _forbidden(message: str, reason: str = "access_forbidden") -> ApiError:
    return ApiError(403, "access_forbidden", message, reason=reason)


def _not_found(kind: str, object_id: str) -> ApiError:
    return ApiError(
        404,
        "not_found",
        f"Can't find object {kind} for `id' parameter: {object_id}",
        reason="object_not_found",
    )


def _missing(name: str) -> ApiError:
    return ApiError(
        400, "missing_required_parameter", f"Missing required parameter `{name}'.", param=name
    )


def _invalid(name: str, message: str) -> ApiError:
    return ApiError(400, "invalid_parameter", message, param=name)


def parse_bool(name: str, value: str) -> bool:
    try:
        return _BOOLS[value.strip().lower()]
    except KeyError:
        raise _invalid(name, f"`{name}' must be a boolean") from None


def _timestamp(name: str, value: str) -> int:
    if not _TIMESTAMP.fullmatch(value) or int(value) > MAX_TIMESTAMP:
        raise _invalid(name, f"`{name}' must be a UNIX timestamp")
    return int(value)


def select(
    record: Mapping[str, Any], fields: str | None, default: Iterable[str], known: Iterable[str]
) -> dict[str, Any]:
    """The fields asked for with ``fields=a,b`` (the defaults without it)."""
    names = [f for f in fields.split(",") if f] if fields else list(default)
    known_set = frozenset(known)
    for name in names:
        if name not in known_set:
            raise ApiError(
                400,
                "invalid_parameter",
                f"Unknown field `{name}'",
                reason="unknown_field",
                param="fields",
            )
    return {name: record.get(name) for name in names}


def paging(query: Mapping[str, str]) -> tuple[int, int]:
    page, limit = query.get("page", "1"), query.get("limit", "10")
    if not (page.isascii() and page.isdigit() and limit.isascii() and limit.isdigit()):
        raise _invalid("page", "`page' and `limit' are numbers")
    if int(page) < 1 or int(page) > 100 or not 1 <= int(limit) <= 100:
        raise _invalid("limit", "`limit' is 1 to 100 and `page' 1 to 100")
    return int(page), int(limit)


def page_of(
    items: list[dict[str, Any]], query: Mapping[str, str], view: Callable[..., Any]
) -> dict[str, Any]:
    page, limit = paging(query)
    chunk = items[(page - 1) * limit : page * limit]
    return {
        "page": page,
        "limit": limit,
        "total": len(items),
        "has_more": page * limit < len(items),
        "list": [view(item) for item in chunk],
    }


@attrs.define
class Backend:
    """The platform's state and rules."""

    store: State
    token_lifetime: float = 36000.0
    encoding_delay: float = 0.2
    """Seconds a new video reads ``status: processing`` before it is ``ready``."""
    escaped_seals: bool = True
    clients: dict[str, str] = attrs.Factory(lambda: {"demo-client": "demo-secret"})
    """OAuth clients: client_id -> client_secret."""
    api_keys: dict[str, tuple[str, str, tuple[str, ...]]] = attrs.Factory(dict)
    """API v2's private API keys beyond (or in place of) ``_v2.API_KEYS``: key ->
    (secret, username, the v2 scopes the key may be granted)."""
    accounts: dict[str, Account] = attrs.Factory(
        lambda: {
            "demo": Account("demo", "demo-password", "Demo User"),
            "other": Account("other", "other-password", "Other User"),
        }
    )
    static_tokens: dict[str, tuple[str, tuple[str, ...]]] = attrs.Factory(dict)
    """Tokens that exist from the start, never expire and survive a reset:
    token -> (username, scopes)."""
    videos_per_day: Callable[[], int | None] = lambda: None
    quota_period: Callable[[], float] = lambda: 86400.0
    api_base: str = ""
    upload_base: str = ""
    on_event: Callable[[str, dict[str, Any]], None] = lambda kind, video: None
    """Told when a video is created or deleted (webhook deliveries listen here)."""

    _seal_secret: bytes = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self._seal_secret = self.store.meta("seal_secret", secrets.token_hex(16)).encode()

    # --- accounts and tokens ---------------------------------------------------------------

    def install_static_tokens(self) -> None:
        forever = time.time() + 10 * 365 * 86400
        for token, (username, scopes) in self.static_tokens.items():
            owner = self.accounts[username].id
            record = {"id": token, "owner": owner, "scopes": sorted(scopes), "expires_at": forever}
            self.store.put("token", token, record)

    def reset(self) -> None:
        self.store.reset()
        self.install_static_tokens()

    def authorize(self, header: str, scope: str | None = None) -> dict[str, Any]:
        """The token record of an ``Authorization`` header, or the platform's 401/403."""
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise ApiError(
                401,
                "invalid_token",
                "Missing access token.",
                headers={"WWW-Authenticate": 'Bearer realm="api", error="invalid_request"'},
            )
        token = self.store.get("token", value.strip())
        if token is None or token["expires_at"] <= time.time():
            raise ApiError(
                401,
                "invalid_token",
                "Invalid or expired access token.",
                headers={
                    "WWW-Authenticate": 'Bearer realm="api", error="invalid_token", '
                    'error_description="The access token provided is invalid or expired"'
                },
            )
        if scope and scope not in token["scopes"]:
            raise ApiError(
                403,
                "access_forbidden",
                f"Insufficient scope: this operation needs `{scope}'.",
                reason="insufficient_scope",
                headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'},
            )
        return token

    def viewer(self, header: str) -> str | None:
        """Who reads a public resource: the token's owner, or ``None`` without a token
        (a token sent must still be valid)."""
        return self.authorize(header)["owner"] if header else None

    def authorize_code(
        self,
        *,
        client_id: str,
        redirect_uri: str,
        scopes: list[str],
        username: str,
        response_type: str,
        code_challenge: str | None = None,
        challenge_method: str = "plain",
    ) -> tuple[int, str, str]:
        """An authorization code for ``username`` (approved at once): ``(302, the
        redirect_uri, the code)``, or ``(400, why, "")``. The code is single-use; with a
        PKCE ``code_challenge`` (S256 or plain) its exchange needs the verifier."""
        if response_type != "code":
            return 400, "response_type must be code", ""
        if code_challenge is not None and challenge_method not in ("S256", "plain"):
            return 400, "code_challenge_method must be S256 or plain", ""
        if client_id not in self.clients:
            return 400, "unknown client_id", ""
        if not redirect_uri.startswith(("http://", "https://")):
            return 400, "redirect_uri must be an http(s) address", ""
        account = self.accounts.get(username)
        if account is None:
            return 400, "unknown user", ""
        unknown = [s for s in scopes if s not in ALL_SCOPES]
        if unknown:
            return 400, f"unknown scope {unknown[0][:40]!r}", ""
        code = secrets.token_urlsafe(18)
        self.store.put(
            "auth_code",
            code,
            {
                "id": code,
                "owner": account.id,
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "scopes": sorted(set(scopes)),
                "expires_at": time.time() + 600,
                "challenge": code_challenge,
                "challenge_method": challenge_method,
            },
        )
        return 302, redirect_uri, code

    def grant(self, form: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        """The token endpoint: ``(status, body)`` in the OAuth shapes."""
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        if not client_id or not hmac.compare_digest(self.clients.get(client_id, ""), secret):
            return 401, _oauth("invalid_client", "The client credentials are invalid")
        grant, scopes = form.get("grant_type", ""), form.get("scope", "").split()
        if grant == "client_credentials":
            owner = "x" + "".join(c for c in client_id.lower() if c.isalnum())[:10] + "c"
        elif grant == "password":
            account = self.accounts.get(form.get("username", ""))
            if account is None or not hmac.compare_digest(
                account.password.encode(), form.get("password", "").encode()
            ):
                return 400, _oauth("invalid_grant", "Invalid username or password")
            owner = account.id
        elif grant == "authorization_code":
            record = self.store.get("auth_code", form.get("code", ""))
            if record is not None:
                self.store.delete("auth_code", record["id"])  # single-use, whatever comes
            if (
                record is None
                or record["client_id"] != client_id
                or record["redirect_uri"] != form.get("redirect_uri", "")
                or record["expires_at"] < time.time()
                or not _verifier_matches(record, form.get("code_verifier"))
            ):
                return 400, _oauth("invalid_grant", "Invalid or expired authorization code")
            owner, scopes = record["owner"], record["scopes"]
        elif grant == "refresh_token":
            record = self.store.get("refresh_token", form.get("refresh_token", ""))
            if record is None:
                return 400, _oauth("invalid_grant", "Invalid refresh token")
            self.store.delete("refresh_token", record["id"])
            owner, scopes = record["owner"], record["scopes"]
        else:
            return 400, _oauth("unsupported_grant_type", "Unsupported grant type")
        unknown = [s for s in scopes if s not in ALL_SCOPES]
        if unknown:
            return 400, _oauth("invalid_scope", f"Unknown scope {unknown[0][:40]!r}")
        access = secrets.token_urlsafe(24)
        record = {
            "id": access,
            "owner": owner,
            "scopes": sorted(set(scopes)),
            "expires_at": time.time() + self.token_lifetime,
        }
        self.store.put("token", access, record)
        body = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(self.token_lifetime),
            "scope": " ".join(record["scopes"]),
            "uid": owner,
        }
        if grant != "client_credentials":
            refresh = secrets.token_urlsafe(24)
            body["refresh_token"] = refresh
            self.store.put(
                "refresh_token",
                refresh,
                {"id": refresh, "owner": owner, "scopes": record["scopes"]},
            )
        return 200, body

    def revoke(self, owner: str) -> None:
        for kind in ("token", "refresh_token"):
            for record in list(self.store.owned(kind, owner)):
                if record["id"] not in self.static_tokens:
                    self.store.delete(kind, record["id"])

    def me(self, owner: str, fields: str | None) -> dict[str, Any]:
        account = next((a for a in self.accounts.values() if a.id == owner), None)
        record: dict[str, Any] = {
            "id": owner,
            "screenname": account.fullname if account else owner,
            "username": account.username if account else owner,
            "fullname": account.fullname if account else owner,
        }
        hook = self.store.get("webhook", owner) or {}
        record["webhook_url"] = hook.get("url")
        record["webhook_events"] = ",".join(hook.get("events", ())) or None
        return select(record, fields, USER_DEFAULT_FIELDS, USER_FIELDS)

    # --- uploads ---------------------------------------------------------------------------

    def seal(self, uuid: str) -> str:
        """The upload's seal as it stands in its address: two halves of the standard
        base64 of an HMAC joined by '/', percent-escaped. Every seal holds ``%2F`` and
        (17 bytes make a '=' pad) ``%3D``, many ``%2B``: a client that re-encodes the
        address (``%2F`` sent as ``/``) breaks it and is refused. With
        ``escaped_seals=False``, plain hex."""
        digest = hmac.new(self._seal_secret, uuid.encode(), hashlib.sha256).digest()[:17]
        if not self.escaped_seals:
            return digest.hex()
        text = base64.b64encode(digest).decode()
        return quote(f"{text[:12]}/{text[12:]}", safe="")

    def seal_ok(self, uuid: str, raw_seal: str) -> bool:
        """Whether ``raw_seal``, as it arrived in the request target, is the seal."""
        return hmac.compare_digest(self.seal(uuid).encode(), raw_seal.encode())

    def new_upload(self, owner: str) -> dict[str, str]:
        uuid = secrets.token_hex(16)
        self.store.put(
            "upload",
            uuid,
            {
                "id": uuid,
                "owner": owner,
                "state": "starting",
                "size": None,
                "received": 0,
                "ranges": [],
                "descriptor": None,
            },
        )
        return {
            "upload_url": f"{self.upload_base}/upload?uuid={uuid}&seal={self.seal(uuid)}",
            "progress_url": f"{self.upload_base}/progress?uuid={uuid}",
        }

    def file_for(self, owner: str, url: str) -> dict[str, Any]:
        """The uploaded file a create names: known, and uploaded by the same account."""
        file = self.store.get("file", url.split("#", 1)[0])
        if file is None:
            raise _invalid("url", "`url' is not a file uploaded to this platform")
        if file["owner"] != owner:
            raise _forbidden("`url' is a file uploaded by another account.")
        return file

    # --- videos ----------------------------------------------------------------------------

    def video(self, video_id: str) -> dict[str, Any]:
        video = self.store.get("video", video_id)
        if video is None:
            raise _not_found("video", video_id)
        return video

    def owned_video(self, owner: str, video_id: str) -> dict[str, Any]:
        video = self.video(video_id)
        if video["owner"] != owner:
            raise _forbidden("You are not the owner of this video.")
        return video

    def visible_video(self, viewer: str | None, video_id: str) -> dict[str, Any]:
        """A video ``viewer`` may read: their own, or one that is public."""
        video = self.video(video_id)
        if video["owner"] != viewer and (not video.get("published") or video.get("private")):
            raise _forbidden("This video is private.", reason="private")
        return video

    def _check_quota(self, owner: str) -> None:
        """403 quota_exceeded when ``owner`` created ``videos_per_day`` videos within the
        last ``quota_period`` seconds (a rolling window, each account its own)."""
        allowed, period = self.videos_per_day(), self.quota_period()
        since = time.time() - period
        if allowed is None or self.store.count("video", owner, since) < allowed:
            return
        oldest = self.store.oldest("video", owner, since) or since
        wait = max(1, math.ceil(oldest + period - time.time()))
        window = "24 hours" if period == 86400 else f"{period:g} seconds"
        raise ApiError(
            403,
            "access_forbidden",
            f"Upload quota exceeded for the last {window}.",
            reason="quota_exceeded",
            headers={"Retry-After": str(wait)},
        )

    def create_video(self, owner: str, form: Mapping[str, str]) -> dict[str, Any]:
        mode = form.get("mode", "vod")
        # a live stream has no file
        file = {} if mode == "live" else self.file_for(owner, _require(form, "url"))
        self._check_quota(owner)
        now = time.time()
        video: dict[str, Any] = {
            "id": new_id(),
            "owner": owner,
            "title": _require(form, "title"),
            "channel": _channel(_require(form, "channel")),
            "published": False,
            "mode": "vod",
            "password": None,
            "created_time": int(now),
            "encoding_started": now,
            "is_created_for_kids": False,
            "private": False,
            "private_id": "k" + new_id()[1:],
            "explicit": False,
            "item_type": "video",
            "description": "",
            "tags": [],
            "language": None,
            "publish_date": None,
            "expiry_date": None,
            "geoblocking": None,
            "thumbnail_url": None,
            "views_total": 0,
            "duration": _seconds_of(file.get("duration")),
            # the stored file's address, kept as ``url`` (its readers: the embed page,
            # tests); what the API reads as ``url`` is the video's page (``_readable``)
            "url": form.get("url", "").split("#", 1)[0] or None,
        }
        self._write(video, {k: v for k, v in form.items() if k not in ("url", "title", "channel")})
        while self.store.get("video", video["id"]) is not None:
            video["id"] = new_id()
        self.store.put("video", video["id"], video)
        self.on_event("video.created", video)
        return video

    def update_video(self, owner: str, video_id: str, form: Mapping[str, str]) -> dict[str, Any]:
        video = self.owned_video(owner, video_id)
        self._write(video, form)
        return self.store.put("video", video["id"], video)

    def delete_video(self, owner: str, video_id: str) -> None:
        video = self.owned_video(owner, video_id)
        for subtitle in list(self.store.children("subtitle", video["id"])):
            self.store.delete("subtitle", subtitle["id"])
        self.store.delete("video", video["id"])
        self.on_event("video.deleted", video)

    def _write(self, video: dict[str, Any], form: Mapping[str, str]) -> None:
        for name, value in form.items():
            if name not in WRITABLE:
                raise _invalid(name, f"`{name[:40]}' is not a writable field")
            if name == "password":
                # A form has no NULL: an empty value removes the password.
                video["password"] = value or None
            elif name in (
                "published",
                "is_created_for_kids",
                "live_auto_record",
                "private",
                "explicit",
            ):
                video[name] = parse_bool(name, value)
            elif name in ("publish_date", "expiry_date"):
                video[name] = _timestamp(name, value) if value else None  # empty: cleared
            elif name == "description":
                if len(value) > MAX_DESCRIPTION:
                    raise _invalid(name, f"`description' is longer than {MAX_DESCRIPTION}")
                video[name] = value
            elif name == "language":
                if not _LANGUAGE_1.fullmatch(value):
                    raise _invalid(name, "`language' must be an ISO 639-1 code")
                video[name] = value
            elif name == "geoblocking":
                video[name] = _geoblocking(value)
            elif name == "channel":
                video["channel"] = _channel(value)
            elif name in ("start_time", "end_time"):
                video[name] = _timestamp(name, value)
            elif name == "mode":
                if value not in ("vod", "live"):
                    raise _invalid("mode", "`mode' must be vod or live")
                video["mode"] = value
                if value == "live":
                    self._make_live(video)
            elif name == "tags":
                video["tags"] = [t.strip() for t in value.split(",") if t.strip()]
            elif name == "thumbnail_url":
                # A url the platform fetches, or an image uploaded here by the same account.
                if urlsplit(value).scheme not in ("http", "https"):
                    raise _invalid(name, "`thumbnail_url' must be an http(s) URL")
                if value.startswith(self.upload_base + "/"):
                    self.file_for(video["owner"], value)
                video[name] = value.split("#", 1)[0]
            elif name == "title":
                if not value.strip():
                    raise _invalid(name, "`title' must not be empty")
                video["title"] = value
            else:
                video[name] = value

    def _make_live(self, video: dict[str, Any]) -> None:
        host = urlsplit(self.api_base).hostname or "127.0.0.1"
        video.setdefault(
            "live_publish_url", f"rtmp://{host}/publish-dm?auth={secrets.token_hex(8)}"
        )
        video.setdefault("onair", False)
        video.setdefault("record_status", "stopped")
        video.setdefault("audience", 0)
        video.setdefault("live_airing_time", 0)
        video.setdefault("live_auto_record", False)

    def _readable(self, video: Mapping[str, Any]) -> dict[str, Any]:
        """Every readable field of a video, computed ones included."""
        out = dict(video)
        out["password_protected"] = video.get("password") is not None
        out["password"] = None  # reading the password gives null
        vid = video["id"]
        out["url"] = f"{self.api_base}/page/video/{vid}"  # its page, not its file
        out["embed_url"] = f"{self.api_base}/embed/video/{vid}"
        out["embed_html"] = (
            f'<iframe frameborder="0" width="480" height="270" src="{out["embed_url"]}" '
            f'allowfullscreen allow="autoplay"></iframe>'
        )
        out["status"], out["encoding_progress"] = self._processing(video)
        out["publishing_progress"] = 100 if out["status"] == "ready" else 0
        if video.get("mode") == "live":
            out["stream_live_hls_url"] = f"{self.api_base}/live/{vid}.m3u8"
        out.pop("encoding_started", None)
        out.pop("encoding_fails", None)
        return out

    def _processing(self, video: Mapping[str, Any]) -> tuple[str, int]:
        """``processing`` with its progress until ``encoding_delay`` has passed."""
        fails = bool(video.get("encoding_fails"))
        if video.get("mode") == "live" or (self.encoding_delay <= 0 and not fails):
            return "ready", 100
        elapsed = time.time() - float(video.get("encoding_started", 0.0))
        if elapsed >= self.encoding_delay:
            return ("encoding_error", -1) if fails else ("ready", 100)
        return "processing", int(100 * elapsed / self.encoding_delay)

    def video_fields(
        self, video: Mapping[str, Any], viewer: str | None, fields: str | None
    ) -> dict[str, Any]:
        """The fields a request asks for; another's owner-only fields are a 403."""
        out = select(self._readable(video), fields, VIDEO_DEFAULT_FIELDS, VIDEO_FIELDS)
        if viewer != video["owner"] and OWNER_ONLY & out.keys():
            names = ", ".join(sorted(OWNER_ONLY & out.keys()))
            raise _forbidden(f"Only the owner can read: {names}.")
        return out

    def my_videos(self, owner: str, query: Mapping[str, str]) -> list[dict[str, Any]]:
        tags = [t for t in query.get("tags", "").split(",") if t]
        mine = list(self.store.tagged(owner, tags) if tags else self.store.owned("video", owner))
        if "mode" in query:
            mine = [v for v in mine if v.get("mode") == query["mode"]]
        if "password_protected" in query:
            want = parse_bool("password_protected", query["password_protected"])
            mine = [v for v in mine if (v.get("password") is not None) == want]
        if query.get("sort") == "recent":
            mine.reverse()
        return mine

    def public_videos(self, query: Mapping[str, str]) -> list[dict[str, Any]]:
        """Published, neither private nor password-protected: what anyone may list."""
        found = [
            v
            for v in self.store.all("video")
            if v.get("published") and not v.get("private") and v.get("password") is None
        ]
        if "owner" in query:
            found = [v for v in found if v["owner"] == query["owner"]]
        if query.get("sort") == "recent":
            found.reverse()
        return found

    # --- subtitles -------------------------------------------------------------------------

    def create_subtitle(self, owner: str, video_id: str, form: Mapping[str, str]) -> dict[str, Any]:
        video = self.owned_video(owner, video_id)
        language, url = _require(form, "language"), _require(form, "url")
        fmt = form.get("format", "SRT")
        if not _LANGUAGE.fullmatch(language):
            raise _invalid("language", "`language' must be an ISO 639 code")
        if fmt != "SRT":
            raise _invalid("format", "`format' must be SRT")
        if urlsplit(url).scheme not in ("http", "https"):
            raise _invalid("url", "`url' must be an http(s) URL")
        if url.startswith(self.upload_base + "/"):
            self.file_for(owner, url)  # one of ours: it must be this account's
        subtitle = {
            "id": new_id(),
            "video": video["id"],
            "owner": owner,
            "language": language,
            "language_label": LANGUAGE_LABELS.get(language, language),
            "format": fmt,
            "url": url.split("#", 1)[0],
            "item_type": "subtitle",
        }
        return self.store.put("subtitle", subtitle["id"], subtitle)

    def subtitles(self, viewer: str | None, video_id: str) -> list[dict[str, Any]]:
        video = self.visible_video(viewer, video_id)
        return list(self.store.children("subtitle", video["id"]))

    def subtitle(self, viewer: str | None, subtitle_id: str) -> dict[str, Any]:
        subtitle = self.store.get("subtitle", subtitle_id)
        if subtitle is None:
            raise _not_found("subtitle", subtitle_id)
        self.visible_video(viewer, subtitle["video"])
        return subtitle

    def delete_subtitle(self, owner: str, subtitle_id: str) -> None:
        subtitle = self.store.get("subtitle", subtitle_id)
        if subtitle is None:
            raise _not_found("subtitle", subtitle_id)
        self.owned_video(owner, subtitle["video"])
        self.store.delete("subtitle", subtitle_id)


def _require(form: Mapping[str, str], name: str) -> str:
    value = form.get(name)
    if value is None or value == "":
        raise _missing(name)
    return value


def _seconds_of(milliseconds: object) -> int:
    """A video's duration in seconds from its file's (the descriptor's milliseconds
    text, ``""`` when unknown: 0)."""
    if isinstance(milliseconds, str) and milliseconds.isdigit():
        return round(int(milliseconds) / 1000)
    return 0


def _geoblocking(value: str) -> list[str] | None:
    """``deny,fr,de`` read as ``["deny", "fr", "de"]``; empty: no geoblocking."""
    items = [item.strip().lower() for item in value.split(",") if item.strip()]
    if not items:
        return None
    countries = items[1:] if items[0] in ("allow", "deny") else items
    if not countries or not all(_COUNTRY.fullmatch(c) for c in countries):
        raise _invalid("geoblocking", "`geoblocking' is allow or deny and ISO 3166-1 alpha-2 codes")
    return items


def _channel(value: str) -> str:
    if value not in CHANNELS:
        raise _invalid("channel", f"`channel' is not a known category: `{value[:40]}'")
    return value


def _oauth(error: str, description: str) -> dict[str, Any]:
    return {"error": error, "error_description": description}


def _verifier_matches(record: Mapping[str, Any], verifier: str | None) -> bool:
    """RFC 7636: a code issued with a challenge is exchanged only with its verifier."""
    challenge = record.get("challenge")
    if challenge is None:
        return True
    if not verifier:
        return False
    if record.get("challenge_method") == "S256":
        digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
        verifier = base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")
    return hmac.compare_digest(verifier.encode(), str(challenge).encode())
