"""The typed results of the API. attrs classes that know nothing of JSON.

Turning wire data into these objects is ``_convert``'s job; these classes only say what
a user may rely on. Every class is frozen: use ``attrs.evolve`` to derive a changed copy.
Fields the platform did not return (because they were not asked for with ``fields``)
are ``None``; every field the server sent, known or not, is also in ``raw``/``fields``.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

import attrs

__all__ = [
    "AccessToken",
    "Dimension",
    "Player",
    "Playlist",
    "Subtitle",
    "UploadProgress",
    "UploadSession",
    "UploadState",
    "UploadedFile",
    "User",
    "Video",
    "Webhook",
]


def _frozen_mapping(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return dict(value)


@attrs.frozen
class UploadSession:
    """A one-time upload address, from ``GET /file/upload``."""

    upload_url: str = attrs.field(repr=False)
    """Where the file goes. Carries ``uuid`` and ``seal``; used exactly as returned.
    Hidden from repr: the seal authorises an upload."""
    progress_url: str
    """Where the upload's progress can be read (``get_upload_progress``)."""


@attrs.frozen
class Dimension:
    """A picture size, read from the wire's ``"<width>x<height>"`` text."""

    width: int
    """Pixels across."""
    height: int
    """Pixels down."""

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


@attrs.frozen
class UploadedFile:
    """The upload server's descriptor of a stored file.

    The platform sends every value as a JSON string; the typed attributes are views of
    those strings (``None`` where the server sent nothing or an empty string, as it does
    for files that are not video). ``raw`` keeps the strings exactly as sent.
    Only ``url`` is needed to create a video.
    """

    url: str
    """The stored file's address, fragment included: pass it to ``create_video``."""
    size: int | None = None
    """Size in bytes."""
    bitrate: int | None = None
    """Bitrate in bits per second."""
    duration: float | None = None
    """Duration in seconds (the wire's milliseconds, ``"36920"``, divided by 1000)."""
    dimension: Dimension | None = None
    """Picture size."""
    streamable: bool | None = None
    """Whether the container is streamable (the wire's ``"Yes"``/``"No"``)."""
    acodec: str | None = None
    """The audio codec's name."""
    vcodec: str | None = None
    """The video codec's name."""
    format: str | None = None
    """Container format name."""
    hash: str | None = None
    """The stored file's hash as text (40 hex characters; the platform does not say
    which algorithm: SHA-1's width, and ``upload_file(verify_hash=True)`` compares it
    with the SHA-1 of what was sent)."""
    name: str | None = None
    """File name without extension."""
    seal: str | None = attrs.field(default=None, repr=False)
    """The upload server's seal of the file (hidden from repr)."""
    raw: Mapping[str, str] = attrs.field(factory=dict, repr=False, converter=_frozen_mapping)
    """Every field as the server sent it."""


class UploadState(enum.StrEnum):
    """States of an upload as ``progress_url`` reports them.

    ``UploadProgress.state`` is a plain ``str`` so that a state the platform adds later
    does not break a client; compare it with these members.
    """

    STARTING = "starting"
    """The address is handed out; no byte has arrived yet."""
    UPLOADING = "uploading"
    """Bytes are arriving (``size`` and ``received`` say how many)."""
    DONE = "done"
    """The file is stored."""
    ERROR = "error"
    """The upload failed: ask for a new address."""


@attrs.frozen
class UploadProgress:
    """An upload's progress, from ``progress_url``."""

    state: str
    """One of ``UploadState``'s values, or a newer one."""
    size: int | None = None
    """Total bytes announced, while uploading."""
    received: int | None = None
    """Bytes received so far, while uploading."""

    @property
    def fraction(self) -> float | None:
        """``received / size`` between 0 and 1, ``1.0`` when done, else ``None``."""
        if self.state == UploadState.DONE:
            return 1.0
        if self.size and self.received is not None:
            return min(1.0, self.received / self.size)
        return None


READY_STATUSES: Final = frozenset({"ready", "published"})
FAILED_STATUSES: Final = frozenset({"encoding_error", "rejected", "deleted", "error"})


# Not slotted: a frozen slotted class sets each of its 32 fields through
# object.__setattr__ (a call per field, about 55k instructions a Video, a tenth of a
# get_video), a frozen dict class writes them into its __dict__ (issue 43).
@attrs.frozen(slots=False)
class Video:
    """A video (or a live stream: a video whose ``mode`` is ``"live"``).

    Only ``id`` is always present; the rest is what the server returned, ``None``
    otherwise. ``fields`` holds every field returned, including ones not modelled here.
    """

    id: str
    """The video's id (``x`` and lowercase letters and digits, e.g. ``"x84sh87"``)."""
    title: str | None = None
    """The title."""
    channel: str | None = None
    """The category's slug (``"news"``; ``client.categories()`` lists them)."""
    owner: str | None = None
    """The id of the account that owns it."""
    published: bool | None = None
    """Whether it is published (public once ready, unless ``private``)."""
    mode: str | None = None
    """``"vod"`` or ``"live"``, or a newer mode."""
    password_protected: bool | None = None
    """Whether a password protects it (``set_password``); the password is never read."""
    status: str | None = None
    """``"processing"`` while encoding, ``"ready"`` or ``"published"`` once playable;
    ``"encoding_error"``, ``"rejected"`` or ``"deleted"`` when it never will be."""
    encoding_progress: int | None = None
    """0-100 while processing; -1 outside processing."""
    onair: bool | None = None
    """Live streams: whether it is on air now."""
    live_publish_url: str | None = attrs.field(default=None, repr=False)
    """Live streams, owner only: the RTMP ingest address. It embeds the stream key,
    so it is hidden from repr."""
    start_time: int | None = None
    """Live streams: the scheduled start, UNIX seconds."""
    end_time: int | None = None
    """Live streams: the scheduled end, UNIX seconds."""
    record_status: str | None = None
    """Live streams: ``starting``, ``started``, ``stopping`` or ``stopped``."""
    stream_live_hls_url: str | None = None
    """Live streams: the HLS address of the stream."""
    description: str | None = None
    """The description (at most 3,000 characters)."""
    tags: list[str] | None = None
    """The tags, in order."""
    language: str | None = None
    """The spoken language, an ISO 639-1 code (``"en"``)."""
    private: bool | None = None
    """Whether it is private: reachable only through its secret URL (``private_id``)."""
    private_id: str | None = None
    """The id of the private video's secret URL."""
    explicit: bool | None = None
    """Whether it is marked as explicit content."""
    is_created_for_kids: bool | None = None
    """Whether it is declared as made for children."""
    duration: int | None = None
    """Its length in seconds."""
    created_time: datetime | None = None
    """When it was created (UTC; the wire's UNIX seconds)."""
    publish_date: datetime | None = None
    """When a scheduled publication happens (UTC), if one is set."""
    expiry_date: datetime | None = None
    """When it stops being available (UTC), if set."""
    geoblocking: list[str] | None = None
    """Where it may be watched: ``["deny", "fr", "de"]`` (ISO 3166-1 alpha-2 codes led
    by ``allow`` or ``deny``)."""
    url: str | None = None
    """Its page on the platform."""
    embed_url: str | None = None
    """The address of its embeddable player (``vidapi_async.embed`` builds the HTML)."""
    thumbnail_url: str | None = None
    """The address of its thumbnail image."""
    views_total: int | None = None
    """How many times it was viewed."""
    fields: Mapping[str, Any] = attrs.field(factory=dict, repr=False, converter=_frozen_mapping)
    """Every field as returned (JSON types)."""

    @property
    def is_live(self) -> bool:
        """True when the server said this video is a live stream."""
        return self.mode == "live"

    @property
    def is_ready(self) -> bool:
        """True when the server said it is playable (``ready`` or ``published``)."""
        return self.status in READY_STATUSES

    @property
    def encoding_failed(self) -> bool:
        """True when the server said it never will be (``encoding_error``, ...)."""
        return self.status in FAILED_STATUSES


@attrs.frozen
class Subtitle:
    """A subtitle file attached to a video."""

    id: str | None = None
    """The subtitle's id."""
    language: str | None = None
    """Its language, an ISO 639 code."""
    format: str | None = None
    """Its format (``"SRT"``)."""
    url: str | None = None
    """Where the subtitle file is."""
    language_label: str | None = None
    """The language's name (``"English"``)."""
    item_type: str | None = None
    """``"subtitle"``."""
    fields: Mapping[str, Any] = attrs.field(factory=dict, repr=False, converter=_frozen_mapping)
    """Every field as returned (JSON types)."""


@attrs.frozen
class AccessToken:
    """An OAuth access token. The token itself never appears in repr or str."""

    token: str = attrs.field(repr=False)
    """The bearer token itself (never in repr or str)."""
    scopes: frozenset[str] | None = None
    """Scopes granted, or ``None`` when unknown (a static token given without them)."""
    expires_at: float | None = None
    """``time.time()`` at which it expires, or ``None`` when unknown."""
    refresh_token: str | None = attrs.field(default=None, repr=False)
    """The token that gets a new one when this one expires, if the grant gave one."""

    def expires_within(self, seconds: float, *, now: float | None = None) -> bool:
        """Whether the token expires in less than ``seconds``."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) + seconds >= self.expires_at


@attrs.frozen
class Playlist:
    """A playlist: an ordered list of videos (``client.playlists``)."""

    id: str
    """The playlist's id."""
    name: str | None = None
    """Its name."""
    description: str | None = None
    """Its description."""
    private: bool | None = None
    """Readable by its owner only."""
    owner: str | None = None
    """The id of the account that owns it."""
    videos_total: int | None = None
    """How many videos it holds."""
    fields: Mapping[str, Any] = attrs.field(factory=dict, repr=False, converter=_frozen_mapping)
    """Every field as returned (JSON types)."""


@attrs.frozen
class Player:
    """A player configuration: its ``id`` is the Player ID of the embeds
    (``vidapi_async.embed.player_iframe_url(player, ...)`` takes the object itself)."""

    id: str
    """The Player ID, as the embeds use it."""
    label: str | None = None
    """Its label (a name for its owner)."""
    owner: str | None = None
    """The id of the account that owns it."""
    fields: Mapping[str, Any] = attrs.field(factory=dict, repr=False, converter=_frozen_mapping)
    """Every field as returned, the settings (``autostart``, ``color``, ...) among them."""


@attrs.frozen
class User:
    """The account behind the token (``client.me()``)."""

    id: str
    """The account's id."""
    username: str | None = None
    """The login name."""
    screenname: str | None = None
    """The name shown to others."""
    fullname: str | None = None
    """The person's full name."""
    fields: Mapping[str, Any] = attrs.field(factory=dict, repr=False, converter=_frozen_mapping)
    """Every field as returned (JSON types)."""


@attrs.frozen
class Webhook:
    """Where the platform sends the account's events (``client.set_webhook``)."""

    url: str
    """Where the events are sent."""
    events: tuple[str, ...] = ()
    """Event names, e.g. ``("video.format.ready", "video.format.error")``."""
