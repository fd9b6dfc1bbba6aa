import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vidapi_async as va
from tests.examples import examples
from vidapi_async import _validate as check


@pytest.mark.parametrize("bad", ["", "x1/../me", "x1?fields=a", "x 1", "é1", 5, None])
def test_video_ids_are_alphanumeric(bad: object) -> None:
    with pytest.raises(va.InvalidArgumentError) as info:
        check.video_id(bad)
    assert info.value.argument == "video_id"


@settings(max_examples=examples(500), deadline=None)
@given(
    st.one_of(
        st.text(max_size=70),
        st.text(alphabet="x8abcZ09\u00b2\u0663\u00e9\u212a", max_size=70),
        st.text(alphabet="abc123", min_size=60, max_size=70),
    )
)
def test_a_video_id_is_what_the_pattern_accepts(value: str) -> None:
    """The check without the regex (issue 43) accepts what ``[A-Za-z0-9]{1,64}``
    accepts, nothing more: not a superscript or Arabic digit, a Kelvin sign, an
    accented letter, an empty or a 65-character id."""
    if re.fullmatch(r"[A-Za-z0-9]{1,64}", value):
        assert check.video_id(value) == value
    else:
        with pytest.raises(va.InvalidArgumentError):
            check.video_id(value)


def test_channel_accepts_unknown_well_formed_slugs() -> None:
    assert check.channel("news") == "news"
    assert check.channel("brandnewcategory") == "brandnewcategory"


@pytest.mark.parametrize("bad", ["", "News", "news!", "-x", 3])
def test_channel_rejects_malformed(bad: object) -> None:
    with pytest.raises(va.InvalidArgumentError, match="channel"):
        check.channel(bad)


def test_channel_suggests_the_slug() -> None:
    with pytest.raises(va.InvalidArgumentError, match="'news'"):
        check.channel("News")


@pytest.mark.parametrize(("given", "sent"), [("en", "en"), ("FR", "fr"), ("deu", "deu")])
def test_language(given: str, sent: str) -> None:
    assert check.language(given) == sent


@pytest.mark.parametrize("bad", ["xx", "english", "en-US", "e", ""])
def test_language_rejects_non_codes(bad: str) -> None:
    with pytest.raises(va.InvalidArgumentError, match="ISO 639"):
        check.language(bad)


def test_password_rules_never_echo_the_value() -> None:
    assert check.password(None) is None
    assert check.password("pw") == "pw"
    with pytest.raises(va.InvalidArgumentError, match="None to remove"):
        check.password("")
    with pytest.raises(va.InvalidArgumentError) as info:
        check.password(12345678)
    assert "12345678" not in str(info.value)


def test_subtitle_format() -> None:
    assert check.subtitle_format("srt") == "SRT"
    with pytest.raises(va.InvalidArgumentError, match="SRT"):
        check.subtitle_format("VTT")


def test_title() -> None:
    with pytest.raises(va.InvalidArgumentError, match="title"):
        check.title("   ")


def test_fields_value_checks_every_list_however_often_asked() -> None:
    assert check.fields_value(["id", "title"]) == "id,title"
    assert check.fields_value(("id", "title")) == "id,title"
    assert check.fields_value("owner.screenname") == "owner.screenname"
    for _ in range(2):  # asked again: still refused (nothing bad is remembered as good)
        with pytest.raises(va.InvalidArgumentError) as info:
            check.fields_value(["id", "title&x=1"])
        assert info.value.argument == "fields"
    with pytest.raises(va.InvalidArgumentError):
        check.fields_value(["id", ["title"]])  # type: ignore[list-item]
    with pytest.raises(va.InvalidArgumentError):
        check.fields_value([])
