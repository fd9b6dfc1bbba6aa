"""vidapi_async: an asyncio client for the Dailymotion-style video platform API.

Everything a user needs is importable from here; the ``_``-modules are private.
``vidapi_async.embed`` holds the pure embed builders, ``vidapi_async.webhooks`` the
receiving side of webhook events.
"""

from importlib import metadata as _metadata

from ._account import Account
from ._auth import OAuth, StaticToken, TokenProvider, authorize_url
from ._auth_v2 import ApiKey
from ._client import DEFAULT_BASE_URL, Client
from ._config import ProgressCallback, Timeouts
from ._digest import HashMismatchWarning
from ._errors import (
    APIError,
    AuthenticationError,
    BadRequestError,
    ClientClosedError,
    ConnectError,
    ConnectionLostError,
    EncodingError,
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
    NotRewindableError,
    OAuthError,
    QuotaExceededError,
    RateLimitedError,
    ReadyTimeoutError,
    RequestTimeoutError,
    ServerError,
    SourceError,
    SubtitleFileError,
    TransportError,
    UnexpectedResponseError,
    UnsupportedOperationError,
    UploadError,
    UploadRejectedError,
    UsageError,
    VidapiError,
    WebhookError,
    WebhookSignatureError,
)
from ._live import LiveStreams
from ._models import (
    AccessToken,
    Dimension,
    Player,
    Playlist,
    Subtitle,
    UploadedFile,
    UploadProgress,
    UploadSession,
    UploadState,
    User,
    Video,
    Webhook,
)
from ._players import Players
from ._playlists import Playlists
from ._raw import RawCalls
from ._retry import NO_RETRY, RetryPolicy
from ._sentinel import NOT_GIVEN, NotGiven
from ._sources import SourcePolicy
from ._subtitles import Subtitles
from ._upload_calls import Uploads
from ._videos import Videos
from .batch import (
    BatchPlan,
    BatchProgress,
    BatchUploader,
    JobRecord,
    JobResult,
    JobStatus,
    Journal,
    MemoryJournal,
    PostgresJournal,
    Quota,
    SharedBatch,
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
    "NOT_GIVEN",
    "NO_RETRY",
    "APIError",
    "AccessToken",
    "Account",
    "ApiKey",
    "AuthenticationError",
    "BadRequestError",
    "BatchPlan",
    "BatchProgress",
    "BatchUploader",
    "Client",
    "ClientClosedError",
    "ConnectError",
    "ConnectionLostError",
    "Dimension",
    "EncodingError",
    "FileChangedError",
    "FileError",
    "ForbiddenError",
    "HashMismatchWarning",
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
    "LiveStreams",
    "MemoryJournal",
    "MissingParameterError",
    "NotFoundError",
    "NotGiven",
    "NotRewindableError",
    "OAuth",
    "OAuthError",
    "Player",
    "Players",
    "Playlist",
    "Playlists",
    "PostgresJournal",
    "ProgressCallback",
    "Quota",
    "QuotaExceededError",
    "RateLimitedError",
    "RawCalls",
    "ReadyTimeoutError",
    "RequestTimeoutError",
    "RetryPolicy",
    "SQLiteJournal",
    "ServerError",
    "SharedBatch",
    "SourceError",
    "SourcePolicy",
    "Stage",
    "StaticToken",
    "Subtitle",
    "SubtitleFileError",
    "SubtitleSpec",
    "Subtitles",
    "Timeouts",
    "TokenProvider",
    "TransportError",
    "UnexpectedResponseError",
    "UnsupportedOperationError",
    "UploadError",
    "UploadJob",
    "UploadProgress",
    "UploadRejectedError",
    "UploadSession",
    "UploadState",
    "UploadedFile",
    "Uploads",
    "UsageError",
    "User",
    "VidapiError",
    "Video",
    "Videos",
    "Webhook",
    "WebhookError",
    "WebhookSignatureError",
    "__version__",
    "authorize_url",
]
