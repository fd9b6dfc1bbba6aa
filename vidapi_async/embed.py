"""Player embeds, as pure functions: URLs, HTML and JavaScript, every value escaped.

Two generations of player:

- the legacy player of the spec: an iframe on ``{embed_url}/embed/video/<id>?<params>``
  and the JS SDK (``{sdk_url}``) call ``DM.player(element, {video, width, height, params})``;
  parameters are ``PlayerParams``, written ``1``/``0`` in URLs;
- the current Player ID embeds (a player configured on the platform, id ``x...``):
  an iframe ``{player_host}/player/<PLAYER_ID>.html?video=<id>``, an embed script
  ``<script src=".../player/<PLAYER_ID>.js" data-video=... data-params=...>`` and the
  library script with ``dailymotion.createPlayer(...)``; parameters are
  ``RuntimeParams``.

Hosts default to the platform's and can all be overridden (the local emulator, a
partner host). Parameters given as a mapping use the platform's own names and an unknown
name is an ``InvalidArgumentError``.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import attrs

from . import _validate as check
from ._errors import InvalidArgumentError
from ._models import Player, Playlist, Video

__all__ = [
    "DEFAULT_EMBED_URL",
    "DEFAULT_PLAYER_HOST",
    "DEFAULT_SDK_URL",
    "PlayerParams",
    "RuntimeParams",
    "iframe_html",
    "iframe_url",
    "player_embed_script",
    "player_iframe_html",
    "player_iframe_url",
    "player_library_html",
    "sdk_html",
    "sdk_player_call",
]

DEFAULT_EMBED_URL = "https://www.dailymotion.com"
DEFAULT_SDK_URL = "https://api.dmcdn.net/all.js"
DEFAULT_PLAYER_HOST = "https://geo.dailymotion.com"

_PLAYER_ID = re.compile(r"[a-z0-9]{1,32}")
_COLOUR = re.compile(r"[0-9a-fA-F]{6}")


def _wire(name: str) -> Any:
    return attrs.field(default=None, metadata={"wire": name})


@attrs.frozen(kw_only=True)
class PlayerParams:
    """Parameters of the legacy player (iframe query string and ``DM.player`` params).

    ``None`` leaves a parameter out (the player's default applies).
    """

    autoplay: bool | None = _wire("autoplay")
    mute: bool | None = _wire("mute")
    controls: bool | None = _wire("controls")
    loop: bool | None = _wire("loop")
    fullscreen: bool | None = _wire("fullscreen")
    queue_autoplay_next: bool | None = _wire("queue-autoplay-next")
    queue_enable: bool | None = _wire("queue-enable")
    sharing_enable: bool | None = _wire("sharing-enable")
    ui_logo: bool | None = _wire("ui-logo")
    ui_start_screen_info: bool | None = _wire("ui-start-screen-info")
    start: int | None = _wire("start")
    """Start position in seconds."""
    quality: str | None = _wire("quality")
    """Preferred quality, e.g. ``"auto"``, ``"720"``."""
    subtitles_default: str | None = _wire("subtitles-default")
    """Language code of the subtitles shown by default."""
    syndication: str | None = _wire("syndication")
    ui_highlight: str | None = _wire("ui-highlight")
    """Highlight colour as six hex digits, e.g. ``"ff0000"``."""
    playlist: str | None = _wire("playlist")
    scale_mode: str | None = _wire("scaleMode")
    """``"fit"``, ``"fill"``, ... as the player documents."""

    def __attrs_post_init__(self) -> None:
        for field in attrs.fields(type(self)):
            _check_type(field.name, getattr(self, field.name), field.type)
        if self.start is not None and self.start < 0:
            raise InvalidArgumentError("start", "must be 0 or more seconds")
        if self.ui_highlight is not None and not _COLOUR.fullmatch(self.ui_highlight):
            raise InvalidArgumentError("ui_highlight", "expected six hex digits, e.g. 'ff0000'")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> PlayerParams:
        """From the platform's names (``{"autoplay": True, "ui-logo": False}``)."""
        return cls(**_by_wire_name(cls, values))

    def items(self) -> list[tuple[str, bool | int | str]]:
        """``(wire name, value)`` for the parameters that are set, in a fixed order."""
        return _set_items(self)


@attrs.frozen(kw_only=True)
class RuntimeParams:
    """Runtime parameters of a Player ID embed (the rest is configured on the player)."""

    mute: bool | None = _wire("mute")
    start_time: int | None = _wire("startTime")
    """Start position in seconds."""
    loop: bool | None = _wire("loop")
    scale_mode: str | None = _wire("scaleMode")
    custom_config: Mapping[str, str] | None = _wire("customConfig")
    """Free keys passed to the player's custom configuration."""

    def __attrs_post_init__(self) -> None:
        for field in attrs.fields(type(self)):
            if field.name != "custom_config":
                _check_type(field.name, getattr(self, field.name), field.type)
        if self.start_time is not None and self.start_time < 0:
            raise InvalidArgumentError("start_time", "must be 0 or more seconds")
        if self.custom_config is not None and not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.custom_config.items()
        ):
            raise InvalidArgumentError("custom_config", "keys and values must be strings")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RuntimeParams:
        """From the platform's names (``{"startTime": 15, "mute": True}``)."""
        return cls(**_by_wire_name(cls, values))

    def query(self) -> list[tuple[str, str]]:
        """As URL parameters (booleans ``true``/``false``, customConfig as ``customConfig[k]``)."""
        out: list[tuple[str, str]] = []
        for name, value in _set_items(self):
            if isinstance(value, Mapping):
                out += [(f"{name}[{k}]", v) for k, v in value.items()]
            else:
                out.append((name, _text(value, bools=("true", "false"))))
        return out


def _check_type(name: str, value: object, annotation: Any) -> None:
    if value is None:
        return
    kind = {"bool | None": bool, "int | None": int, "str | None": str}[str(annotation)]
    ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
    if not ok:
        raise InvalidArgumentError(name, f"expected {kind.__name__}, got {value!r}")


def _by_wire_name(cls: type[Any], values: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.metadata["wire"]: f.name for f in attrs.fields(cls)}
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise InvalidArgumentError(
            "params",
            f"unknown player parameter(s) {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(sorted(names))}",
        )
    return {names[k]: v for k, v in values.items()}


def _set_items(params: PlayerParams | RuntimeParams) -> list[tuple[str, Any]]:
    return [
        (f.metadata["wire"], getattr(params, f.name))
        for f in attrs.fields(type(params))
        if getattr(params, f.name) is not None
    ]


def _text(value: bool | int | str, *, bools: tuple[str, str]) -> str:
    if isinstance(value, bool):
        return bools[0] if value else bools[1]
    return str(value)


def _params(params: PlayerParams | Mapping[str, Any] | None) -> PlayerParams:
    if params is None:
        return PlayerParams()
    if isinstance(params, PlayerParams):
        return params
    return PlayerParams.from_mapping(params)


def _runtime(params: RuntimeParams | Mapping[str, Any] | None) -> RuntimeParams:
    if params is None:
        return RuntimeParams()
    if isinstance(params, RuntimeParams):
        return params
    return RuntimeParams.from_mapping(params)


def _size(value: int | str, name: str) -> str:
    text = str(value)
    if isinstance(value, bool) or not re.fullmatch(r"[0-9]{1,5}(%|px)?", text):
        raise InvalidArgumentError(
            name, f"expected pixels (640) or a percentage ('100%'), got {value!r}"
        )
    return text


def _host(url: str, name: str) -> str:
    return check.http_url(url, name).rstrip("/")


def _js(value: object) -> str:
    """A JavaScript literal that is also safe inside an HTML <script> element."""
    return (
        json.dumps(value, ensure_ascii=True)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


# --- the legacy player --------------------------------------------------------------------


def iframe_url(
    video_id: str | Video,
    params: PlayerParams | Mapping[str, Any] | None = None,
    *,
    embed_url: str = DEFAULT_EMBED_URL,
) -> str:
    """``{embed_url}/embed/video/<id>?autoplay=1&mute=1``: the player page for an iframe."""
    vid = check.video_id(video_id)
    query = urlencode([(k, _text(v, bools=("1", "0"))) for k, v in _params(params).items()])
    return f"{_host(embed_url, 'embed_url')}/embed/video/{vid}" + (f"?{query}" if query else "")


def iframe_html(
    video_id: str | Video,
    params: PlayerParams | Mapping[str, Any] | None = None,
    *,
    width: int | str = 640,
    height: int | str = 360,
    embed_url: str = DEFAULT_EMBED_URL,
    title: str | None = None,
) -> str:
    """The ``<iframe>`` element of the spec: frameborder, width, height, allowfullscreen
    and ``allow="autoplay"``."""
    src = iframe_url(video_id, params, embed_url=embed_url)
    title_attr = f' title="{_attr(title)}"' if title else ""
    return (
        f'<iframe frameborder="0" width="{_size(width, "width")}" '
        f'height="{_size(height, "height")}" src="{_attr(src)}"{title_attr} '
        f'allowfullscreen allow="autoplay"></iframe>'
    )


def sdk_player_call(
    element_id: str,
    video_id: str | Video,
    params: PlayerParams | Mapping[str, Any] | None = None,
    *,
    width: int | str = 640,
    height: int | str = 360,
) -> str:
    """``DM.player(document.getElementById(...), {video, width, height, params});``"""
    options = {
        "video": check.video_id(video_id),
        "width": _size(width, "width"),
        "height": _size(height, "height"),
        "params": dict(_params(params).items()),
    }
    return f"DM.player(document.getElementById({_js(_element_id(element_id))}), {_js(options)});"


def sdk_html(
    video_id: str | Video,
    params: PlayerParams | Mapping[str, Any] | None = None,
    *,
    element_id: str = "player",
    width: int | str = 640,
    height: int | str = 360,
    sdk_url: str = DEFAULT_SDK_URL,
) -> str:
    """A complete snippet: the target ``<div>``, the SDK script and the player call."""
    call = sdk_player_call(element_id, video_id, params, width=width, height=height)
    return (
        f'<div id="{_attr(_element_id(element_id))}"></div>\n'
        f'<script src="{_attr(check.http_url(sdk_url, "sdk_url"))}"></script>\n'
        f"<script>{call}</script>"
    )


def _element_id(value: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_:.-]*", value):
        raise InvalidArgumentError("element_id", f"{value!r} is not an HTML id")
    return value


# --- Player ID embeds ---------------------------------------------------------------------


def _player_id(value: str | Player) -> str:
    """A Player ID, given as text or as the ``Player`` that ``client.players`` returns."""
    if isinstance(value, Player):
        value = value.id
    if not isinstance(value, str) or not _PLAYER_ID.fullmatch(value):
        raise InvalidArgumentError("player_id", f"{value!r} is not a player id (e.g. 'x9abc')")
    return value


def _content(
    video_id: str | Video | None, playlist: str | Playlist | None
) -> list[tuple[str, str]]:
    video_id = video_id.id if isinstance(video_id, Video) else video_id
    playlist = playlist.id if isinstance(playlist, Playlist) else playlist
    if (video_id is None) == (playlist is None):
        raise InvalidArgumentError("video_id/playlist", "give exactly one of them")
    if video_id is not None:
        return [("video", check.video_id(video_id))]
    return [("playlist", check.video_id(playlist, "playlist"))]


def player_iframe_url(
    player_id: str | Player,
    video_id: str | Video | None = None,
    params: RuntimeParams | Mapping[str, Any] | None = None,
    *,
    playlist: str | Playlist | None = None,
    player_host: str = DEFAULT_PLAYER_HOST,
) -> str:
    """``{player_host}/player/<PLAYER_ID>.html?video=<id>&...``"""
    query = urlencode(_content(video_id, playlist) + _runtime(params).query())
    return f"{_host(player_host, 'player_host')}/player/{_player_id(player_id)}.html?{query}"


def player_iframe_html(
    player_id: str | Player,
    video_id: str | Video | None = None,
    params: RuntimeParams | Mapping[str, Any] | None = None,
    *,
    playlist: str | Playlist | None = None,
    width: int | str = 640,
    height: int | str = 360,
    player_host: str = DEFAULT_PLAYER_HOST,
) -> str:
    """The Player ID ``<iframe>``."""
    src = player_iframe_url(player_id, video_id, params, playlist=playlist, player_host=player_host)
    return (
        f'<iframe frameborder="0" width="{_size(width, "width")}" '
        f'height="{_size(height, "height")}" src="{_attr(src)}" '
        f'allowfullscreen allow="autoplay; fullscreen; picture-in-picture"></iframe>'
    )


def player_embed_script(
    player_id: str | Player,
    video_id: str | Video | None = None,
    params: RuntimeParams | Mapping[str, Any] | None = None,
    *,
    playlist: str | Playlist | None = None,
    player_host: str = DEFAULT_PLAYER_HOST,
) -> str:
    """``<script src=".../player/<PLAYER_ID>.js" data-video="<id>" data-params="...">``"""
    src = f"{_host(player_host, 'player_host')}/player/{_player_id(player_id)}.js"
    data = "".join(f' data-{k}="{_attr(v)}"' for k, v in _content(video_id, playlist))
    query = "&".join(
        f"{quote(k, safe='[]')}={quote(v, safe='')}" for k, v in _runtime(params).query()
    )
    if query:
        data += f' data-params="{_attr(query)}"'
    return f'<script src="{_attr(src)}"{data}></script>'


def player_library_html(
    player_id: str | Player,
    video_id: str | Video | None = None,
    params: RuntimeParams | Mapping[str, Any] | None = None,
    *,
    playlist: str | Playlist | None = None,
    element_id: str = "player",
    player_host: str = DEFAULT_PLAYER_HOST,
) -> str:
    """The library script and ``dailymotion.createPlayer("<div>", {...})`` (a Promise)."""
    src = f"{_host(player_host, 'player_host')}/libs/player/{_player_id(player_id)}.js"
    options: dict[str, Any] = dict(_content(video_id, playlist))
    runtime = dict(_set_items(_runtime(params)))
    if runtime:
        options["params"] = runtime
    target = _element_id(element_id)
    return (
        f'<div id="{_attr(target)}"></div>\n'
        f'<script src="{_attr(src)}"></script>\n'
        f"<script>dailymotion.createPlayer({_js(target)}, {_js(options)});</script>"
    )
