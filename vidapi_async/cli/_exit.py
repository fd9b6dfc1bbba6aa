"""The ``vidapi`` command's exit codes, and which error gives which."""

from __future__ import annotations

from .. import _errors as e

__all__ = [
    "EXIT_API",
    "EXIT_BROKEN_PIPE",
    "EXIT_JOBS_FAILED",
    "EXIT_OK",
    "EXIT_OTHER",
    "EXIT_TRANSPORT",
    "EXIT_UPLOAD",
    "EXIT_USAGE",
    "INSTALL_HINT",
    "exit_code",
]

EXIT_OK, EXIT_OTHER, EXIT_USAGE, EXIT_API, EXIT_TRANSPORT, EXIT_UPLOAD = 0, 1, 2, 3, 4, 5
EXIT_JOBS_FAILED = 6
EXIT_BROKEN_PIPE = 141
"""stdout's reader went away (``vidapi ... | head``): 128 + SIGPIPE, what a shell gives a
command a closed pipe stopped, so ``set -o pipefail`` can tell the output was cut short."""
INSTALL_HINT = (
    'the vidapi command needs the cli extra: pip install ".[cli]" from a checkout, '
    'or the wheel with [cli] ("dist/vidapi_async-VERSION-py3-none-any.whl[cli]")'
)


def exit_code(exc: BaseException) -> int:
    if isinstance(exc, e.UsageError):
        return EXIT_USAGE
    if isinstance(exc, e.APIError):
        return EXIT_API
    if isinstance(exc, e.TransportError):
        return EXIT_TRANSPORT
    if isinstance(exc, e.UploadError):
        return EXIT_UPLOAD
    return EXIT_OTHER
