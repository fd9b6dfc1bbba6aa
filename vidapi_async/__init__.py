"""vidapi_async: an asyncio client for the Dailymotion-style video platform API.

Everything a user needs is importable from here; the ``_``-modules are private.
``vidapi_async.embed`` holds the pure embed builders.
"""

from ._auth import OAuth, StaticToken, TokenProvider
from ._batch import BatchProgress, BatchUploader, JobResult, JobStatus, SubtitleSpec, UploadJob
from ._client import DEFAULT_BASE_URL, Client
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
    InsufficientScopeError,
    InvalidArgumentError,
    InvalidParameterError,
    InvalidTokenError,
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
from ._http import Timeouts
from ._journal import JobRecord, Journal, MemoryJournal, SQLiteJournal, Stage
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
from ._multipart import ProgressCallback
from ._retry import NO_RETRY, RetryPolicy

__version__ = "0.1.0"

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
    "InsufficientScopeError",
    "InvalidArgumentError",
    "InvalidParameterError",
    "InvalidTokenError",
    "JobRecord",
    "JobResult",
    "JobStatus",
    "Journal",
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
