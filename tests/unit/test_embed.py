import json
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from mypy import api as mypy_api

import vidapi_async as va
from vidapi_async import embed


def test_iframe_url_of_the_spec() -> None:
    url = embed.iframe_url("x7tgad0", {"autoplay": True, "mute": True})
    assert url == "https://www.dailymotion.com/embed/video/x7tgad0?autoplay=1&mute=1"
    assert embed.iframe_url("x7tgad0", embed.PlayerParams(mute=False)).endswith("?mute=0")
    assert embed.iframe_url("x7tgad0") == "https://www.dailymotion.com/embed/video/x7tgad0"


def test_iframe_html_has_the_spec_attributes() -> None:
    html = embed.iframe_html("x7tgad0", {"autoplay": True}, width=480, height="100%")
    assert 'frameborder="0"' in html
    assert 'width="480"' in html and 'height="100%"' in html
    assert " allowfullscreen " in html
    assert 'allow="autoplay"' in html
    assert 'src="https://www.dailymotion.com/embed/video/x7tgad0?autoplay=1"' in html


def test_values_are_escaped_for_html_and_urls() -> None:
    html = embed.iframe_html(
        "x1", {"mute": True, "quality": "720"}, embed_url="https://h.example/a", title='"><b>'
    )
    assert "&amp;" in html
    assert "<b>" not in html
    url = re.search(r'src="([^"]+)"', html)
    assert url is not None
    assert dict(parse_qsl(urlsplit(url.group(1).replace("&amp;", "&")).query)) == {
        "mute": "1",
        "quality": "720",
    }


def test_unknown_parameters_are_refused_by_name() -> None:
    with pytest.raises(va.InvalidArgumentError, match="'autoply'"):
        embed.iframe_url("x1", {"autoply": True})


def test_parameter_types_are_checked() -> None:
    with pytest.raises(va.InvalidArgumentError, match="autoplay"):
        embed.PlayerParams(autoplay="yes")  # type: ignore[arg-type]
    with pytest.raises(va.InvalidArgumentError, match="start"):
        embed.PlayerParams(start=True)  # type: ignore[arg-type]
    with pytest.raises(va.InvalidArgumentError, match="ui_highlight"):
        embed.PlayerParams(ui_highlight="red")


def test_bad_ids_and_sizes_never_reach_the_markup() -> None:
    with pytest.raises(va.InvalidArgumentError):
        embed.iframe_url('x1"><script>', None)
    with pytest.raises(va.InvalidArgumentError):
        embed.iframe_html("x1", width='640" onload="x')


def test_sdk_call_is_valid_json_and_script_safe() -> None:
    call = embed.sdk_player_call("player", "x1", {"autoplay": True, "mute": True}, width=640)
    m = re.fullmatch(r"DM\.player\(document\.getElementById\((.+?)\), (.+)\);", call)
    assert m is not None
    assert json.loads(m.group(1)) == "player"
    assert json.loads(m.group(2)) == {
        "video": "x1",
        "width": "640",
        "height": "360",
        "params": {"autoplay": True, "mute": True},
    }
    snippet = embed.sdk_html("x1", {"ui-highlight": "ff0000"}, sdk_url="https://s.example/all.js")
    assert '<script src="https://s.example/all.js"></script>' in snippet
    assert '<div id="player"></div>' in snippet


def test_sdk_strings_cannot_close_the_script() -> None:
    call = embed.sdk_player_call("p", "x1", {"quality": "</script><b>"})
    assert "</script>" not in call
    assert json.loads(call.split(", ", 1)[1][:-2])["params"]["quality"] == "</script><b>"


def test_player_id_iframe() -> None:
    url = embed.player_iframe_url("xabc1", "x7tgad0", {"mute": True, "startTime": 15})
    assert (
        url == "https://geo.dailymotion.com/player/xabc1.html?video=x7tgad0&mute=true&startTime=15"
    )
    html = embed.player_iframe_html("xabc1", playlist="x6hynp")
    assert "player/xabc1.html?playlist=x6hynp" in html


def test_player_id_embed_script() -> None:
    tag = embed.player_embed_script(
        "xabc1", "x7tgad0", embed.RuntimeParams(start_time=15, mute=True)
    )
    assert tag == (
        '<script src="https://geo.dailymotion.com/player/xabc1.js" data-video="x7tgad0" '
        'data-params="mute=true&amp;startTime=15"></script>'
    )


def test_player_library_create_player() -> None:
    out = embed.player_library_html(
        "xabc1", "x7tgad0", {"mute": True, "customConfig": {"k": "v"}}, element_id="dm"
    )
    assert '<script src="https://geo.dailymotion.com/libs/player/xabc1.js"></script>' in out
    m = re.search(r'dailymotion\.createPlayer\("dm", (.+)\);', out)
    assert m is not None
    assert json.loads(m.group(1)) == {
        "video": "x7tgad0",
        "params": {"mute": True, "customConfig": {"k": "v"}},
    }


def test_player_id_needs_exactly_one_of_video_or_playlist() -> None:
    with pytest.raises(va.InvalidArgumentError, match="exactly one"):
        embed.player_iframe_url("xabc1")
    with pytest.raises(va.InvalidArgumentError, match="player_id"):
        embed.player_iframe_url("../x", "x1")


@pytest.mark.system
def test_a_video_stands_for_its_id_in_every_embed(tmp_path: Path) -> None:
    video = va.Video(id="x7tgad0")
    assert embed.iframe_url(video) == embed.iframe_url("x7tgad0")
    assert embed.iframe_html(video) == embed.iframe_html("x7tgad0")
    assert embed.sdk_player_call("p", video) == embed.sdk_player_call("p", "x7tgad0")
    assert embed.sdk_html(video) == embed.sdk_html("x7tgad0")
    # and the type hints say so: a user's mypy --strict accepts a Video there
    snippet = tmp_path / "use_embed.py"
    snippet.write_text(
        "import vidapi_async as va\n"
        "from vidapi_async import embed\n"
        "v = va.Video(id='x7tgad0')\n"
        "urls: list[str] = [embed.iframe_url(v), embed.iframe_html(v),\n"
        "    embed.sdk_player_call('p', v), embed.sdk_html(v)]\n",
        encoding="utf-8",
    )
    out, err, code = mypy_api.run(
        ["--strict", "--no-incremental", "--follow-imports=silent", str(snippet)]
    )
    assert code == 0, out + err
