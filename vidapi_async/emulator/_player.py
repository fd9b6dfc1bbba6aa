"""The player side: the legacy embed page and a JS SDK whose ``DM.player`` inserts it.

The page is a real HTML5 player: a ``<video>`` element playing the uploaded file, with
``autoplay`` and ``mute`` honoured (``1``/``true`` enable, as the platform's player).
"""

from __future__ import annotations

import html
import json

from aiohttp import web

from ._platform import PLATFORM

__all__ = ["routes"]

routes = web.RouteTableDef()

_TRUE = ("1", "true", "yes")

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>html,body{{margin:0;height:100%;background:#000}}video{{width:100%;height:100%}}</style>
</head><body>
<video id="video" src="{src}" data-video-id="{vid}" controls playsinline{attrs}></video>
<script>
const v = document.getElementById("video");
v.muted = {muted};
if ({autoplay}) {{ v.play().catch(function (e) {{ v.dataset.playError = String(e); }}); }}
</script>
</body></html>
"""

_SDK = """(function () {
  var EMBED = %s;
  function q(params) {
    var out = [];
    for (var k in (params || {})) {
      var v = params[k];
      if (v === true) v = 1; else if (v === false) v = 0;
      out.push(encodeURIComponent(k) + "=" + encodeURIComponent(String(v)));
    }
    return out.length ? "?" + out.join("&") : "";
  }
  window.DM = {
    player: function (element, options) {
      options = options || {};
      if (!options.video) throw new Error("DM.player: options.video is required");
      var iframe = document.createElement("iframe");
      iframe.setAttribute("frameborder", "0");
      iframe.setAttribute("width", options.width || "640");
      iframe.setAttribute("height", options.height || "360");
      iframe.setAttribute("allowfullscreen", "");
      iframe.setAttribute("allow", "autoplay");
      iframe.src = EMBED + "/embed/video/" + encodeURIComponent(options.video) + q(options.params);
      if (element.id) iframe.id = element.id;
      element.parentNode.replaceChild(iframe, element);
      return iframe;
    }
  };
})();
"""


@routes.get(r"/embed/video/{id:[A-Za-z0-9]+}")
async def embed_page(request: web.Request) -> web.Response:
    platform = request.app[PLATFORM]
    video = platform.state.get("video", request.match_info["id"])
    src = None if video is None else video.get("url")  # the stored file
    if video is None or not src:
        return web.Response(status=404, text="This video does not exist.", content_type="text/html")
    autoplay = request.query.get("autoplay", "0").lower() in _TRUE
    muted = request.query.get("mute", "0").lower() in _TRUE
    extra = (" autoplay" if autoplay else "") + (" muted" if muted else "")
    if request.query.get("loop", "0").lower() in _TRUE:
        extra += " loop"
    page = _PAGE.format(
        title=html.escape(video["title"]),
        src=html.escape(src, quote=True),
        vid=html.escape(video["id"], quote=True),
        attrs=extra,
        muted="true" if muted else "false",
        autoplay="true" if autoplay else "false",
    )
    return web.Response(text=page, content_type="text/html")


_WATCH = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body><h1>{title}</h1>
<iframe src="/embed/video/{vid}" width="640" height="360" allowfullscreen></iframe>
<p>{description}</p></body></html>
"""


@routes.get(r"/page/video/{id:[A-Za-z0-9]+}")
async def video_page(request: web.Request) -> web.Response:
    """A video's page (its ``url``): the platform's ``/video/<id>`` page, here under
    ``/page/`` since ``/video/<id>`` is the API's on the emulator's one host."""
    video = request.app[PLATFORM].state.get("video", request.match_info["id"])
    if video is None:
        return web.Response(status=404, text="This video does not exist.", content_type="text/html")
    if not video.get("published") or video.get("private") or video.get("password"):
        return web.Response(status=403, text="This video is private.", content_type="text/html")
    page = _WATCH.format(
        title=html.escape(video["title"]),
        vid=html.escape(video["id"], quote=True),
        description=html.escape(video.get("description") or ""),
    )
    return web.Response(text=page, content_type="text/html")


@routes.get("/js/all.js")
async def sdk_script(request: web.Request) -> web.Response:
    platform = request.app[PLATFORM]
    return web.Response(
        text=_SDK % json.dumps(platform.backend.api_base), content_type="application/javascript"
    )
