"""``client.videos``: create, upload, read, list, change, protect, delete and wait for
a video, give it a thumbnail, and the categories its ``channel`` takes.

Where the legacy API and v2 differ, the client's dialect (``_dialects.dialect``) is called;
the metadata is checked once into a ``VideoMetadata`` that the dialect encodes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from .. import _validate as check
from .._alias import deprecated
from .._config import ProgressCallback
from .._convert import category_page, structure
from .._dialects.operations import Operation
from .._errors import (
    APIError,
    EncodingError,
    InvalidArgumentError,
    ReadyTimeoutError,
    TransportError,
    UsageError,
)
from .._models import Video
from .._observe import SOURCE_SIZE, VIDEO_ID, describe, operation
from .._requester import Requester
from .._retry import create_checked
from .._s3 import S3Object, is_s3_url
from .._sentinel import NOT_GIVEN, NotGiven
from .._transfer.files import inspect_file
from .._transfer.sources import UploadSource
from .._transfer.uploads import Uploads
from .._webhook_receiver import WebhookEvents
from .categories import KeptCategories
from .fields import VIDEO_FIELDS
from .service import Service
from .video_metadata import VideoMetadata, check_tag_room

if TYPE_CHECKING:
    from .._dialects.dialect import Dialect

__all__ = ["Videos"]

log = logging.getLogger("vidapi_async")


class Videos(Service):
    """The caller's videos. Wherever a video id is taken, the ``Video`` itself (any
    object with a string ``id``) is too."""

    def __init__(self, requester: Requester, dialect: Dialect, uploads: Uploads) -> None:
        super().__init__(requester, dialect)
        self._uploads = uploads
        self._categories = KeptCategories()

    @operation("create_video")
    async def create(
        self,
        *,
        url: str,
        title: str,
        channel: str,
        description: str | NotGiven = NOT_GIVEN,
        tags: Sequence[str] | NotGiven = NOT_GIVEN,
        language: str | NotGiven = NOT_GIVEN,
        published: bool = True,
        private: bool | NotGiven = NOT_GIVEN,
        is_created_for_kids: bool = False,
        explicit: bool | NotGiven = NOT_GIVEN,
        publish_date: datetime | NotGiven = NOT_GIVEN,
        expiry_date: datetime | NotGiven = NOT_GIVEN,
        geoblocking: Sequence[str] | NotGiven = NOT_GIVEN,
        thumbnail_url: str | NotGiven = NOT_GIVEN,
        extra: Mapping[str, str] | None = None,
        dedupe_tag: str | None = None,
        password: str | None = None,
    ) -> Video:
        """``POST /me/videos``: create a video from an uploaded file's ``url``.

        The metadata is checked before anything is sent and written in the platform's
        form conventions (see the uploads guide): ``description`` (at most 3,000
        characters), ``tags`` (a sequence of strings), ``language`` (ISO 639-1, e.g.
        ``"en"``), ``private``, ``explicit``, ``publish_date`` and ``expiry_date``
        (time-zone aware ``datetime``s; sent as UNIX seconds), ``geoblocking``
        (``("deny", "fr", "de")``: ISO 3166-1 alpha-2 codes led by ``allow`` or
        ``deny``), ``thumbnail_url``. What is not given is not sent.
        ``is_created_for_kids`` is always sent: the live platform requires it.
        ``extra`` adds form fields as given (form text, for what has no argument).
        ``password`` travels in the create itself, so the video is protected from the
        moment it exists (never public first, then protected).

        A create is retried only when it surely did not take effect (no connection, or
        a 429). With ``dedupe_tag`` (letters, digits, '-' and '_'), the video is tagged
        with it, and after a failure that leaves the outcome unknown (a timeout, a lost
        connection, a 5xx) the client looks for a video with that tag before trying
        again: it adopts the newest it finds with the title sent, so a video is never
        created twice.
        """
        metadata = VideoMetadata.checked(
            title=title,
            channel=channel,
            description=description,
            tags=tags,
            language=language,
            published=published,
            private=private,
            is_created_for_kids=is_created_for_kids,
            explicit=explicit,
            publish_date=publish_date,
            expiry_date=expiry_date,
            geoblocking=geoblocking,
            thumbnail_url=thumbnail_url,
        )
        return await self._create(check.http_url(url, "url"), metadata, extra, dedupe_tag, password)

    async def _create(
        self,
        url: str,
        metadata: VideoMetadata,
        extra: Mapping[str, str] | None = None,
        dedupe_tag: str | None = None,
        password: str | None = None,
    ) -> Video:
        """``create`` once its metadata is checked (``upload`` checks it before its
        upload)."""
        if dedupe_tag is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", dedupe_tag):
            raise InvalidArgumentError("dedupe_tag", "letters, digits, '-' and '_' only")
        check_tag_room(metadata, dedupe_tag)
        dialect = self._dialect
        request = await dialect.create_video_request(
            self._requester, url, metadata, extra, dedupe_tag, password
        )
        decode = dialect.video_from
        if dedupe_tag is None:
            video = structure(decode(await self._requester.call(request)), Video, what=request.what)
        else:

            async def create() -> Video:
                data = decode(await self._requester.call_once(request))
                return structure(data, Video, what=request.what)

            sent = metadata.values.get("title")

            async def find() -> Video | None:
                # the newest with the tag and the title sent: an older video may carry
                # the tag (another's with that tag, which this create did not make)
                found = await self.find_by_tag(dedupe_tag)
                same = [v for v in found if sent is None or v.title is None or v.title == sent]
                return same[-1] if same else None

            video = await create_checked(self._requester.retry, create, find, what=request.what)
        describe(self._requester, VIDEO_ID, video.id)
        return video

    @operation("delete_video")
    async def delete(self, video_id: str | Video) -> None:
        """``DELETE /video/<id>``. Deleting a video that is already gone raises
        ``NotFoundError``."""
        video_id = check.video_id(video_id)
        describe(self._requester, VIDEO_ID, video_id)
        await self._requester.call(self._dialect.delete_video_request(self._requester, video_id))

    async def mine(
        self, fields: Iterable[str] | str = VIDEO_FIELDS, *, page_size: int = 100
    ) -> AsyncIterator[Video]:
        """The caller's videos (``GET /me/videos``), oldest first, fetched a page at a
        time as the iteration goes (the platform's ``total`` is approximate: this pages
        on ``has_more``)."""
        asked = check.field_names(fields)
        if not 1 <= check.positive_int(page_size, "page_size") <= 100:
            raise InvalidArgumentError("page_size", "the platform pages by 1 to 100")
        async for video in self._dialect.videos(self._requester, asked, page_size):
            yield video

    @operation("find_videos_by_tag")
    async def find_by_tag(self, tag: str) -> list[Video]:
        """``GET /me/videos?tags=<tag>``: the caller's videos carrying ``tag``, oldest
        first (at most 100)."""
        if not isinstance(tag, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", tag):
            raise InvalidArgumentError("tag", "letters, digits, '-' and '_' only")
        return await self._dialect.videos_by_tag(self._requester, tag)

    @operation("upload_video")
    async def upload(
        self,
        source: UploadSource | S3Object | None = None,
        *,
        title: str,
        channel: str,
        description: str | NotGiven = NOT_GIVEN,
        tags: Sequence[str] | NotGiven = NOT_GIVEN,
        language: str | NotGiven = NOT_GIVEN,
        published: bool = True,
        private: bool | NotGiven = NOT_GIVEN,
        is_created_for_kids: bool = False,
        explicit: bool | NotGiven = NOT_GIVEN,
        publish_date: datetime | NotGiven = NOT_GIVEN,
        expiry_date: datetime | NotGiven = NOT_GIVEN,
        geoblocking: Sequence[str] | NotGiven = NOT_GIVEN,
        thumbnail_url: str | NotGiven = NOT_GIVEN,
        progress: ProgressCallback | None = None,
        chunked: bool = False,
        workers: int = 4,
        filename: str | None = None,
        size: int | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> Video:
        """The three steps: get an upload address, stream the source, create the video.

        ``source`` (or ``path=``), ``filename``, ``size``, ``chunked`` and ``workers`` as
        for ``client.uploads.file``; the metadata (``title`` to ``thumbnail_url``) as for
        ``create``. The arguments (and a path's file) are checked before anything is
        sent; then, before the first byte, ``channel`` against the platform's categories
        (``categories()``): a miss raises ``InvalidArgumentError`` naming every valid
        one. Where the list cannot be had, the server judges.
        """
        metadata = VideoMetadata.checked(
            title=title,
            channel=channel,
            description=description,
            tags=tags,
            language=language,
            published=published,
            private=private,
            is_created_for_kids=is_created_for_kids,
            explicit=explicit,
            publish_date=publish_date,
            expiry_date=expiry_date,
            geoblocking=geoblocking,
            thumbnail_url=thumbnail_url,
        )
        check.callback(progress, "progress")
        local = path if source is None else source
        if isinstance(local, str | os.PathLike) and not is_s3_url(local):
            await asyncio.to_thread(inspect_file, local)
        # what the create would refuse is refused before the upload session
        await self._dialect.ready_to_create(self._requester, metadata)
        await self._check_category(channel)
        uploaded = await self._uploads.file(
            source,
            path=path,
            size=size,
            filename=filename,
            progress=progress,
            chunked=chunked,
            workers=workers,
        )
        describe(self._requester, SOURCE_SIZE, uploaded.size)
        return await self._create(uploaded.url, metadata)

    @operation("get_video")
    async def get(self, video_id: str | Video, fields: Iterable[str] | str = VIDEO_FIELDS) -> Video:
        """``GET /video/<id>?fields=...``: the named fields of a video."""
        names = check.fields_value(fields)
        video_id = check.video_id(video_id)
        describe(self._requester, VIDEO_ID, video_id)
        request = self._dialect.video_request(self._requester, video_id, names, None)
        data = self._dialect.video_from(await self._requester.call(request))
        if "id" not in data:  # (an answer's own id is the one kept, as before)
            data = {"id": video_id, **data}
        return structure(data, Video, what=request.what)

    @operation("wait_until_ready")
    async def wait_until_ready(
        self,
        video_id: str | Video,
        *,
        timeout: float = 3600.0,
        poll: float = 2.0,
        max_poll: float = 30.0,
        progress: Callable[[Video], None] | None = None,
        events: WebhookEvents | None = None,
    ) -> Video:
        """Poll the video until the platform says it is playable, and return it.

        The first look is after ``poll`` seconds, then the wait grows by half each time up
        to ``max_poll``. ``progress(video)`` sees every look (``status``,
        ``encoding_progress``). A failure status (``encoding_error``, ``rejected``,
        ``deleted``) raises ``EncodingError``; no playable video within ``timeout``
        seconds raises ``ReadyTimeoutError``, which is also a ``TimeoutError``.

        ``events`` (a ``vidapi_async.webhooks.WebhookEvents`` fed by a webhook handler):
        an event about this video makes the next look happen at once instead of at the
        next poll; polling goes on as the fallback (a lost event costs one interval).
        """
        video_id = check.video_id(video_id)
        describe(self._requester, VIDEO_ID, video_id)
        for name, value in (("timeout", timeout), ("poll", poll), ("max_poll", max_poll)):
            check.positive_number(value, name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        delay, last = poll, None
        with contextlib.ExitStack() as stack:
            wake = None if events is None else stack.enter_context(events.watch(video_id))
            while (left := deadline - loop.time()) > 0:
                await _pause(wake, min(delay, left))
                last = await self.get(video_id)
                if progress is not None:
                    progress(last)
                if last.is_ready:
                    return last
                if last.encoding_failed:
                    raise EncodingError(video_id, last.status)
                delay = min(delay * 1.5, max_poll)
        raise ReadyTimeoutError(
            video_id,
            None if last is None else last.status,
            None if last is None else last.encoding_progress,
            timeout,
        )

    @operation("update_video")
    async def update(
        self,
        video_id: str | Video,
        fields: Mapping[str, str] | None = None,
        *,
        title: str | NotGiven = NOT_GIVEN,
        channel: str | NotGiven = NOT_GIVEN,
        description: str | NotGiven = NOT_GIVEN,
        tags: Sequence[str] | NotGiven = NOT_GIVEN,
        language: str | NotGiven = NOT_GIVEN,
        published: bool | NotGiven = NOT_GIVEN,
        private: bool | NotGiven = NOT_GIVEN,
        is_created_for_kids: bool | NotGiven = NOT_GIVEN,
        explicit: bool | NotGiven = NOT_GIVEN,
        publish_date: datetime | NotGiven | None = NOT_GIVEN,
        expiry_date: datetime | NotGiven | None = NOT_GIVEN,
        geoblocking: Sequence[str] | NotGiven | None = NOT_GIVEN,
        thumbnail_url: str | NotGiven = NOT_GIVEN,
        extra: Mapping[str, str] | None = None,
        returning: Iterable[str] = VIDEO_FIELDS,
    ) -> Video:
        """``POST /video/<id>``: change the metadata named, and only that.

        The arguments are ``create``'s, checked the same way before anything is
        sent; ``publish_date``, ``expiry_date`` or ``geoblocking`` given as ``None``
        clear the field (an empty form value), ``description=""`` and ``tags=[]``
        empty it. ``extra`` adds form text as given, for what has no argument.
        ``returning``: the fields the answer carries.

        ``fields`` (a mapping of form text, the positional second argument) is the
        older spelling of ``extra``: deprecated.
        """
        if fields is not None:
            deprecated("update_video(video_id, fields)", "update_video(video_id, extra=fields)")
            if extra is not None:
                raise UsageError("give the form text once: extra= (fields is its old name)")
            extra = fields
        metadata = VideoMetadata.checked(
            title=title,
            channel=channel,
            description=description,
            tags=tags,
            language=language,
            published=published,
            private=private,
            is_created_for_kids=is_created_for_kids,
            explicit=explicit,
            publish_date=publish_date,
            expiry_date=expiry_date,
            geoblocking=geoblocking,
            thumbnail_url=thumbnail_url,
        )
        return await self._dialect.update_video(
            self._requester, video_id, metadata, extra, returning, self.get
        )

    @operation("set_password")
    async def set_password(self, video_id: str | Video, password: str | None) -> Video:
        """Protect a video with ``password``, or remove its password with ``None``.

        In the legacy API the video is then as it was apart from the password; in API
        v2 a password video becomes ``private`` (docs/guides/api-v2.md "Visibility").
        ``None`` travels as an empty ``password=`` field: a form has no NULL, and the
        platform treats the empty value as removal. The password never appears in a
        log line, repr or error message. Returns the video with ``password_protected``.
        """
        value = check.password(password)
        return await self._dialect.set_password(self._requester, video_id, value, self.get)

    @operation("set_thumbnail")
    async def set_thumbnail(
        self, video_id: str | Video, source: str | os.PathLike[str] | UploadSource
    ) -> Video:
        """Give a video its thumbnail (``thumbnail_url`` written on the video).

        ``source`` is either an ``http(s)://`` address the platform fetches itself, or
        a local image in any form ``client.uploads.file`` takes (a path, bytes, a file,
        chunks): it is uploaded first and its uploaded address written. A path that
        happens to start with ``http://`` is given as a ``pathlib.Path``.
        """
        self._dialect.refuse(Operation.SET_THUMBNAIL)
        vid = check.video_id(video_id)
        if isinstance(source, str) and source.lower().startswith(("http://", "https://")):
            url = check.http_url(source, "source")
        else:
            url = (await self._uploads.file(source)).url
        return await self._dialect.set_thumbnail(self._requester, vid, url)

    @operation("categories")
    async def categories(self) -> list[str]:
        """``GET /channels``: the category slugs a video's ``channel`` takes, in the
        platform's order. Asked once, then kept by the client for an hour."""
        self._dialect.refuse(Operation.CATEGORIES)
        kept_list = self._categories
        async with kept_list.lock:
            kept = kept_list.fresh(asyncio.get_running_loop().time())
            if kept is not None:
                return list(kept)
            slugs: list[str] = []
            for page in range(1, 101):  # the platform pages up to 100
                request = self._requester.api(
                    "GET", "/channels", query=[("page", str(page)), ("limit", "100")]
                )
                data = await self._requester.call(request)
                items, more = category_page(data, what=request.what)
                slugs += items
                if not more or not items:
                    break
            kept_list.keep(slugs, asyncio.get_running_loop().time())
            return list(slugs)

    async def _check_category(self, channel: str) -> None:
        """Refuse a channel that is not one of the platform's categories; where the
        list cannot be had, say so in the debug log and let the server judge."""
        if not self._dialect.offers(Operation.CATEGORIES):  # no list to check: the server judges
            return
        try:
            slugs = await self.categories()
        except (APIError, TransportError) as exc:
            log.debug("GET /channels failed (%s): the server will judge the channel", exc)
            return
        if slugs and channel not in slugs:
            raise InvalidArgumentError(
                "channel", f"{channel!r} is not a category; the platform's: {', '.join(slugs)}"
            )


async def _pause(wake: asyncio.Event | None, seconds: float) -> None:
    """Sleep ``seconds``, or less when ``wake`` is set (then cleared for the next time)."""
    if wake is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wake.wait(), seconds)
    wake.clear()
