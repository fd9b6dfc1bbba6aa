"""The API dialects: the protocol a dialect keeps, the legacy API's and API v2's,
and the operations one may refuse."""
