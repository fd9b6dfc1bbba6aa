"""The fields the typed operations ask for by default (``fields=``), per kind of object."""

from __future__ import annotations

from typing import Final

__all__ = ["LIVE_FIELDS", "SUBTITLE_FIELDS", "VIDEO_FIELDS"]

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
