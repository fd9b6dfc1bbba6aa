"""The sans-io core: requests as data, answers deciphered, the multipart envelope and
the chunked protocol's state machine. Nothing here imports asyncio or aiohttp (a test
enforces it), so all of it is tested without a socket or an event loop.
"""

from ._answers import (
    MAX_JSON_DEPTH,
    NestedTooDeep,
    NumberTooLong,
    UnreadableJson,
    api_error,
    decode_api_response,
    decode_oauth_response,
    decode_upload_response,
    json_object,
    parse_retry_after,
)
from ._chunked import ChunkedUpload, ChunkRequest, merge_ranges, parse_held_ranges, regions
from ._http11 import Answer, AnswerFramer, AnswerTooLarge, BrokenAnswer, UnsendableRequest
from ._multipart import attachment_disposition, multipart_envelope, new_boundary
from ._proxy import Proxy, proxy_for
from ._requests import (
    SECRET_FORM_FIELDS,
    Request,
    api_path,
    api_request,
    form_bool,
    form_fields,
    form_value,
    origin,
    query_values,
    redact,
    redact_data,
    url_file_name,
    url_for_humans,
)

__all__ = [
    "MAX_JSON_DEPTH",
    "SECRET_FORM_FIELDS",
    "Answer",
    "AnswerFramer",
    "AnswerTooLarge",
    "BrokenAnswer",
    "ChunkRequest",
    "ChunkedUpload",
    "NestedTooDeep",
    "NumberTooLong",
    "Proxy",
    "Request",
    "UnreadableJson",
    "UnsendableRequest",
    "api_error",
    "api_path",
    "api_request",
    "attachment_disposition",
    "decode_api_response",
    "decode_oauth_response",
    "decode_upload_response",
    "form_bool",
    "form_fields",
    "form_value",
    "json_object",
    "merge_ranges",
    "multipart_envelope",
    "new_boundary",
    "origin",
    "parse_held_ranges",
    "parse_retry_after",
    "proxy_for",
    "query_values",
    "redact",
    "redact_data",
    "regions",
    "url_file_name",
    "url_for_humans",
]
