"""vidapi_async: an asyncio client for the Dailymotion-style video platform API.

Everything a user needs is importable from here; the ``_``-modules are private.
``vidapi_async.embed`` holds the pure embed builders, ``vidapi_async.webhooks`` the
receiving side of webhook events.
"""

from importlib import metadata as _metadata

from ._auth.api_key import ApiKey
from ._auth.providers import OAuth, StaticToken, TokenProvider, authorize_url
from ._client import DEFAULT_BASE_URL, Client
from ._config import ProgressCallback, Timeouts
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
    MissingExtraError,
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
from ._resources.account import Account
from ._resources.live import LiveStreams
from ._resources.players import Players
from ._resources.playlists import Playlists
from ._resources.raw import RawCalls
from ._resources.subtitles import Subtitles
from ._resources.videos import Videos
from ._retry import NO_RETRY, RetryPolicy
from ._s3 import S3Object
from ._sentinel import NOT_GIVEN, NotGiven
from ._transfer.digest import HashMismatchWarning
from ._transfer.sources import SourcePolicy
from ._transfer.uploads import Uploads
from .batch import (
    BatchPlan,
    BatchProgress,
    BatchUploader,
    JobRecord,
    JobResult,
    JobStatus,
    Journal,
    LeftOut,
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
    "LeftOut",
    "LiveStreams",
    "MemoryJournal",
    "MissingExtraError",
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
    "S3Object",
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
