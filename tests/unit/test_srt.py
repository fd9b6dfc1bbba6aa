import pytest

import vidapi_async as va
from vidapi_async._transfer.srt import parse_srt

GOOD = b"\xef\xbb\xbf1\r\n00:00:01,000 --> 00:00:02,500\r\nHello\r\nthere\r\n\r\n2\r\n00:00:03.000 --> 00:00:04,000\r\nBye\r\n"


def test_parses_cues_with_bom_and_crlf() -> None:
    cues = parse_srt(GOOD)
    assert [c.number for c in cues] == [1, 2]
    assert cues[0].start == 1.0 and cues[0].end == 2.5
    assert cues[0].text == "Hello\nthere"


@pytest.mark.parametrize(
    ("data", "cue", "line", "words"),
    [
        (
            b"1\n00:00:01,000 --> 00:00:02,000\nok\n\nx\n00:00:03,000 --> 00:00:04,000\nt\n",
            2,
            5,
            "cue number",
        ),
        (b"1\n00:00:01,000 -> 00:00:02,000\nok\n", 1, 2, "HH:MM:SS"),
        (b"1\n00:00:05,000 --> 00:00:02,000\nok\n", 1, 2, "ends before"),
        (b"1\n00:00:01,000 --> 00:00:02,000\n\n", 1, 3, "no text"),
        (b"\n\n", 0, 1, "no cues"),
        (b"1\n00:00:01,000 --> 00:00:02,000\n\xff\n", 0, 3, "UTF-8"),
    ],
)
def test_broken_files_name_the_cue(data: bytes, cue: int, line: int, words: str) -> None:
    with pytest.raises(va.SubtitleFileError) as info:
        parse_srt(data, "subs.srt")
    assert info.value.cue == cue
    assert info.value.line == line
    assert words in str(info.value)
    assert str(info.value).startswith("subs.srt: ")
