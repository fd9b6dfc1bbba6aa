"""``--compare DIR``: another checkout of the project, whose ``vidapi_async`` a child
process imports through ``PYTHONPATH``. A directory without the package would leave the
child importing the installed code, so that "compare" measured this code against itself:
refused here. Make one with ``git worktree add --detach DIR COMMIT``."""

from __future__ import annotations

import argparse
import os


def checkout(value: str) -> str:
    """An ``argparse`` type: ``value`` as an absolute path, if it holds ``vidapi_async``."""
    path = os.path.abspath(value)
    if not os.path.isfile(os.path.join(path, "vidapi_async", "__init__.py")):
        raise argparse.ArgumentTypeError(
            f"{value!r} holds no vidapi_async/ (make a checkout of another commit with "
            "'git worktree add --detach DIR COMMIT')"
        )
    return path
