"""In headless Chromium: the library's iframe embed and its DM.player snippet, served
by the emulator, play the uploaded video, muted when asked.
And the documentation site: its home page, the Client reference and a search.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import vidapi_async as va
from vidapi_async import embed
from vidapi_async.emulator import Emulator

pytestmark = pytest.mark.system  # headless Chromium, and the site built with mkdocs


ROOT = Path(__file__).resolve().parents[2]


def _browser_paths() -> tuple[str, str] | None:
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    paths = _browser_paths()
    if paths is None:
        pytest.skip(
            "headless Chromium (chromium, chromedriver) is not installed: "
            "run scripts/install-test-system-deps (as root) to install it"
        )
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium fetch a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--mute-audio",
    ):
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=Service(executable_path=paths[1]))
    try:
        yield browser
    finally:
        browser.quit()


PLAYBACK = """
const v = document.querySelector('video');
return v ? {src: v.currentSrc, muted: v.muted, paused: v.paused, time: v.currentTime,
            error: v.error ? v.error.code : null} : null;
"""


def _watch(driver: Any, page: str) -> dict[str, Any]:
    """Open ``page``, enter the player's iframe, and wait for the video to advance."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page)
    frame = WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "iframe"))
    driver.switch_to.frame(frame)
    try:
        state: dict[str, Any] = WebDriverWait(driver, 30).until(
            lambda d: (s := d.execute_script(PLAYBACK)) and s["time"] > 0 and s
        )
        return state
    finally:
        driver.switch_to.default_content()


async def _uploaded_sample(client: va.Client, tmp_path: Path) -> va.Video:
    sample = tmp_path / "sample.webm"
    with resources.as_file(resources.files("vidapi_async.emulator") / "sample.webm") as src:
        shutil.copyfile(src, sample)
    return await client.upload_video(sample, title="browser test", channel="tech")


def _page(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")
    return path.as_uri()


async def test_iframe_embed_plays_muted(
    driver: Any, emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    video = await _uploaded_sample(client, tmp_path)
    html = embed.iframe_html(
        video.id, {"autoplay": True, "mute": True}, embed_url=emulator.embed_url
    )
    state = await asyncio.to_thread(_watch, driver, _page(tmp_path, "iframe.html", html))
    stored = emulator.state.get("video", video.id)
    assert stored is not None
    assert state["src"] == stored["url"]
    assert state["muted"] is True
    assert state["error"] is None
    assert state["paused"] is False


async def test_sdk_snippet_plays_and_mute_follows_the_parameter(
    driver: Any, emulator: Emulator, client: va.Client, tmp_path: Path
) -> None:
    video = await _uploaded_sample(client, tmp_path)
    muted = embed.sdk_html(video.id, {"autoplay": True, "mute": True}, sdk_url=emulator.sdk_url)
    state = await asyncio.to_thread(_watch, driver, _page(tmp_path, "sdk.html", muted))
    assert state["muted"] is True
    assert state["time"] > 0
    loud = embed.sdk_html(video.id, {"autoplay": True, "mute": False}, sdk_url=emulator.sdk_url)
    page = _page(tmp_path, "sdk-loud.html", loud)

    def loud_state() -> dict[str, Any]:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        driver.get(page)
        frame = WebDriverWait(driver, 20).until(lambda d: d.find_element(By.TAG_NAME, "iframe"))
        driver.switch_to.frame(frame)
        try:
            result: dict[str, Any] = WebDriverWait(driver, 20).until(
                lambda d: d.execute_script(PLAYBACK)
            )
            return result
        finally:
            driver.switch_to.default_content()

    assert (await asyncio.to_thread(loud_state))["muted"] is False


# -- the documentation site ---------------------------------------------------------------


@pytest.fixture(scope="module")
def site_url(built_site: Path) -> Iterator[str]:
    """The built site, served over http on 127.0.0.1 (search needs http, not file:)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _text_appears(driver: Any, selector: str, text: str) -> str:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def found(d: Any) -> str | bool:
        for element in d.find_elements(By.CSS_SELECTOR, selector):
            if text in element.text:
                return str(element.text)
        return False

    return str(WebDriverWait(driver, 30).until(found))


def test_site_home_client_reference_and_search(driver: Any, site_url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.get(site_url + "/")
    _text_appears(driver, "article", "Getting started")
    links = {a.text for a in driver.find_elements(By.CSS_SELECTOR, "article a")}
    assert {"Getting started", "Recipes", "Reference"} <= links

    driver.get(site_url + "/reference/client/")
    _text_appears(driver, "article h2", "Client")
    _text_appears(driver, "article", "upload_video")

    driver.get(site_url + "/")
    driver.find_element(By.CSS_SELECTOR, "label[for='__search']").click()
    box = driver.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.send_keys("upload_video")
    hit = _text_appears(driver, ".md-search-result__item", "upload_video")
    assert "upload_video" in hit
    box.send_keys(Keys.ESCAPE)
