import pytest

import vidapi_async as va
from vidapi_async._convert import structure

DESCRIPTOR = {
    "acodec": "AAC",
    "bitrate": "1287118",
    "dimension": "1280x720",
    "duration": "30030",
    "format": "mp4",
    "hash": "a3f1",
    "name": "movie",
    "seal": "s",
    "size": "4831218",
    "streamable": "Yes",
    "url": "http://upload-01.example/files/a3f1.mp4#eyJ9",
    "vcodec": "H264",
}


def test_descriptor_strings_become_typed_views() -> None:
    f = structure(DESCRIPTOR, va.UploadedFile, what="upload")
    assert f.size == 4831218 and f.bitrate == 1287118
    assert f.duration == pytest.approx(30.03)
    assert f.dimension == va.Dimension(1280, 720)
    assert f.streamable is True
    assert f.raw == DESCRIPTOR
    assert "seal" not in repr(f)


def test_a_real_descriptors_units() -> None:
    # One of the two public samples, decoded: 2,858,492 bytes at 619,391 bit/s is 36.92 s,
    # so the descriptor's duration "36920" is in milliseconds.
    sample = {
        "url": "http://upload-12.example/files/0123456789abcdef0123456789abcdef.mkv#x",
        "size": "2858492",
        "bitrate": "619391",
        "duration": "36920",
        "hash": "9b8e5c0b1d1f0c6b7f3a1e2d4c5b6a7980a1b2c3",
    }
    f = structure(sample, va.UploadedFile, what="upload")
    assert f.duration == pytest.approx(36.92)
    assert f.size is not None and f.bitrate is not None
    assert f.size * 8 / f.bitrate == pytest.approx(f.duration, rel=0.01)
    assert f.hash == "9b8e5c0b1d1f0c6b7f3a1e2d4c5b6a7980a1b2c3"


def test_unknown_fields_are_tolerated_and_kept_raw() -> None:
    f = structure({**DESCRIPTOR, "new_field": "x"}, va.UploadedFile, what="upload")
    assert f.raw["new_field"] == "x"


def test_empty_strings_mean_absent() -> None:
    f = structure({**DESCRIPTOR, "dimension": "", "vcodec": ""}, va.UploadedFile, what="u")
    assert f.dimension is None and f.vcodec is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("size", "1.9"),
        ("size", "-4"),
        ("size", True),
        ("streamable", "True"),
        ("streamable", True),
        ("dimension", "1280*720"),
        ("duration", "abc"),
        ("url", 5),
    ],
)
def test_wire_types_are_strict(field: str, value: object) -> None:
    with pytest.raises(va.UnexpectedResponseError) as info:
        structure({**DESCRIPTOR, field: value}, va.UploadedFile, what="upload")
    assert f"upload.{field}" in str(info.value)


def test_a_descriptor_without_url_is_refused() -> None:
    data = {k: v for k, v in DESCRIPTOR.items() if k != "url"}
    with pytest.raises(va.UnexpectedResponseError, match="url"):
        structure(data, va.UploadedFile, what="upload")


def test_video_booleans_must_be_json_booleans() -> None:
    v = structure({"id": "x1", "password_protected": True, "extra": 3}, va.Video, what="v")
    assert v.password_protected is True and v.fields["extra"] == 3
    with pytest.raises(va.UnexpectedResponseError):
        structure({"id": "x1", "password_protected": "true"}, va.Video, what="v")


def test_progress_fraction() -> None:
    p = structure(
        {"state": "uploading", "size": "200", "received": 50}, va.UploadProgress, what="p"
    )
    assert p.fraction == 0.25
    assert structure({"state": "done"}, va.UploadProgress, what="p").fraction == 1.0
    assert structure({"state": "somethingnew"}, va.UploadProgress, what="p").fraction is None


def test_live_publish_url_is_hidden_from_repr() -> None:
    v = structure({"id": "x1", "live_publish_url": "rtmp://h/app?auth=KEY"}, va.Video, what="v")
    assert "KEY" not in repr(v)
    assert v.live_publish_url == "rtmp://h/app?auth=KEY"


def test_non_object_is_refused() -> None:
    with pytest.raises(va.UnexpectedResponseError, match="JSON object"):
        structure([], va.Video, what="v")


VIDEO_ANSWER = {
    "id": "x8abc12",
    "title": "A title",
    "channel": "news",
    "published": True,
    "duration": 3692,
    "tags": ["a", "b"],
    "created_time": 1700000000,
    "encoding_progress": 40,
    "fields": "the platform's own",
    "unknown": {"kept": 1},
}


@pytest.mark.parametrize("keys", [("id",), ("id", "title", "duration"), tuple(VIDEO_ANSWER)])
def test_a_video_read_quickly_equals_the_one_attrs_makes(keys: tuple[str, ...]) -> None:
    """The fast path (the answer's keys only, the instance filled in two dictionary
    updates) makes what cattrs and the class's own ``__init__`` make: same values,
    same ``fields``, frozen, the defaults for what the answer left out."""
    import attrs

    from vidapi_async._convert import UnixTime, _converter

    data = {k: VIDEO_ANSWER[k] for k in keys}
    video = structure(data, va.Video, what="v")
    checked = {k: v for k, v in data.items() if k in attrs.fields_dict(va.Video) and k != "fields"}
    if "created_time" in checked:
        checked["created_time"] = _converter.structure(checked["created_time"], UnixTime)
    expected = va.Video(**checked, fields=data)
    assert video == expected and attrs.asdict(video) == attrs.asdict(expected)
    assert video.fields == data and video.fields is not data
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        video.title = "changed"  # type: ignore[misc]


def test_a_model_missing_its_id_is_refused_by_the_fast_path_too() -> None:
    with pytest.raises(va.UnexpectedResponseError, match="id"):
        structure({"title": "no id"}, va.Video, what="v")
    with pytest.raises(va.UnexpectedResponseError, match="id"):
        structure({"label": "no id"}, va.Player, what="p")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", 1),
        ("title", True),
        ("title", ["a"]),
        ("password_protected", "true"),
        ("password_protected", 1),
        ("duration", "12"),
        ("duration", True),
        ("duration", -1),
        ("duration", 1.5),
        ("id", ""),
        ("id", None),
        ("tags", "a,b"),
        ("created_time", 1.5),
    ],
)
def test_an_answer_of_known_fields_only_is_as_strict(field: str, value: object) -> None:
    """Every key a field of the model (the fast path's usual answer): a value not of
    its wire type is refused all the same, and null is a field's absence, not a value
    to convert."""
    answer = {"id": "x1", "title": "t", "duration": 3, "password_protected": False}
    with pytest.raises(va.UnexpectedResponseError, match=field):
        structure({**answer, field: value}, va.Video, what="v")
    video = structure({**answer, "title": None, "duration": None}, va.Video, what="v")
    assert (video.title, video.duration, video.password_protected) == (None, None, False)
    assert video.fields == {**answer, "title": None, "duration": None}


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        ("id", "x2", ""),
        ("duration", 3, -1),
        ("created_time", 1700000000, 10**20),
        ("title", "t", None),
        ("tags", ["a"], ["a", 1]),
    ],
)
def test_an_answer_of_a_shape_seen_before_is_checked_again(
    field: str, good: object, bad: object
) -> None:
    """An answer's keys and value types decide once what needs no check (issue 43);
    a value whose check depends on the value itself is checked at every call: the
    second answer, of the same keys and types as the first, is refused all the same
    (``title`` null is a field's absence, not an error)."""
    answer = {"id": "x1", "title": "t", "duration": 3, "extra": 1}
    first = structure({**answer, field: good}, va.Video, what="v")
    assert getattr(first, field) is not None
    if field == "title":
        second = structure({**answer, field: bad}, va.Video, what="v")
        assert second.title is None and second.fields["title"] is None
        return
    with pytest.raises(va.UnexpectedResponseError, match=field):
        structure({**answer, field: bad}, va.Video, what="v")


def test_an_answer_read_by_its_shape_is_the_one_read_key_by_key() -> None:
    """The same answer read a second time (its shape kept) makes the same video, with
    the keys that are not the model's only in ``fields``."""
    answer = {"id": "x1", "title": "t", "duration": 3, "extra": {"a": 1}, "published": True}
    first = structure(dict(answer), va.Video, what="v")
    second = structure(dict(answer), va.Video, what="v")
    assert first == second and vars(first) == vars(second)
    assert "extra" not in vars(second) and second.fields == answer
