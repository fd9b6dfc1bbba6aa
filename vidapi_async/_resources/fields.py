"""The fields the typed operations ask for by default (``fields=``), per kind of object."""

from __future__ import annotations

from typing import Final

__all__ = [
    "LIVE_FIELDS",
    "PLAYER_FIELDS",
    "PLAYER_SCOPE",
    "PLAYLIST_FIELDS",
    "PLAYLIST_SCOPE",
    "SUBTITLE_FIELDS",
    "VIDEO_FIELDS",
    "WEBHOOK_FIELDS",
]

VIDEO_FIELDS: Final = (
    "id",
    "title",
    "channel",
    "owner",
    "published",
    "mode",
    "status",
    "password_protected",
    "encoding_progress",
)
LIVE_FIELDS: Final = (
    *VIDEO_FIELDS,
    "onair",
    "live_publish_url",
    "start_time",
    "end_time",
    "record_status",
    "stream_live_hls_url",
)
SUBTITLE_FIELDS: Final = ("id", "language", "language_label", "format", "url", "item_type")
PLAYER_FIELDS: Final = (
    "id",
    "label",
    "owner",
    "autostart",
    "aspect_ratio",
    "color",
    "enable_sharing",
    "enable_autonext",
    "enable_ads",
    "mute",
)
PLAYER_SCOPE: Final = "manage_players"
"""The legacy API's scope for everything about players."""
PLAYLIST_FIELDS: Final = ("id", "name", "description", "private", "owner", "videos_total")
PLAYLIST_SCOPE: Final = "manage_playlists"
"""The legacy API's scope for playlist writes."""
WEBHOOK_FIELDS: Final = "webhook_url,webhook_events"
"""What the legacy API's ``/me`` is asked for to read the webhook."""
