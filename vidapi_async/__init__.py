"""vidapi_async: an asyncio client for the Dailymotion-style video platform API.

Everything a user needs is importable from here; the ``_``-modules are private.
``vidapi_async.embed`` holds the pure embed builders.
"""

from importlib import metadata as _metadata

from ._auth import OAuth, StaticToken, TokenProvider
from ._client import DEFAULT_BASE_URL, Client
from ._config import ProgressCallback, Timeouts
from ._errors import (
    APIError,
    AuthenticationError,
    BadRequestError,
    ClientClosedError,
    ConnectError,
    ConnectionLostError,
    FileChangedError,
    FileError,
    ForbiddenError,
    InsecureURLError,
    InsufficientScopeError,
    InvalidArgumentError,
    InvalidParameterError,
    InvalidRequestError,
    InvalidTokenError,
    JournalError,
    MissingParameterError,
    NotFoundError,
    OAuthError,
    RateLimitedError,
    RequestTimeoutError,
    ServerError,
    SubtitleFileError,
    TransportError,
    UnexpectedResponseError,
    UploadError,
    UploadRejectedError,
    UsageError,
    VidapiError,
)
from ._models import (
    AccessToken,
    Dimension,
    Subtitle,
    UploadedFile,
    UploadProgress,
    UploadSession,
    UploadState,
    Video,
)
from ._retry import NO_RETRY, RetryPolicy
from .batch import (
    BatchProgress,
    BatchUploader,
    JobRecord,
    JobResult,
    JobStatus,
    Journal,
    MemoryJournal,
    SQLiteJournal,
    Stage,
    SubtitleSpec,
    UploadJob,
)

try:
    __version__ = _metadata.version("vidapi-async")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0+unknown"

__all__ = [
    "DEFAULT_BASE_URL",
    "NO_RETRY",
    "APIError",
    "AccessToken",
    "AuthenticationError",
    "BadRequestError",
    "BatchProgress",
    "BatchUploader",
    "Client",
    "ClientClosedError",
    "ConnectError",
    "ConnectionLostError",
    "Dimension",
    "FileChangedError",
    "FileError",
    "ForbiddenError",
    "InsecureURLError",
    "InsufficientScopeError",
    "InvalidArgumentError",
    "InvalidParameterError",
    "InvalidRequestError",
    "InvalidTokenError",
    "JobRecord",
    "JobResult",
    "JobStatus",
    "Journal",
    "JournalError",
    "MemoryJournal",
    "MissingParameterError",
    "NotFoundError",
    "OAuth",
    "OAuthError",
    "ProgressCallback",
    "RateLimitedError",
    "RequestTimeoutError",
    "RetryPolicy",
    "SQLiteJournal",
    "ServerError",
    "Stage",
    "StaticToken",
    "Subtitle",
    "SubtitleFileError",
    "SubtitleSpec",
    "Timeouts",
    "TokenProvider",
    "TransportError",
    "UnexpectedResponseError",
    "UploadError",
    "UploadJob",
    "UploadProgress",
    "UploadRejectedError",
    "UploadSession",
    "UploadState",
    "UploadedFile",
    "UsageError",
    "VidapiError",
    "Video",
    "__version__",
]
