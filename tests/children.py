"""Child processes that a test stops with a signal.

A child inherits its parent's ignored signals: started from a background shell (which
ignores SIGINT for what it starts) or under a runner that ignores SIGTERM, a Python child
installs no ``KeyboardInterrupt`` handler and a test's Ctrl-C does nothing. A test that
signals a child therefore sets the child's dispositions itself, with
``preexec_fn=default_signals``, and runs with ``parent_ignores_signals`` (tests/conftest.py)
so that a child started without it fails there, not only in a background shell."""

from __future__ import annotations

import signal

SIGNALS_SENT = (signal.SIGINT, signal.SIGTERM)
"""The signals tests send to children that a parent may have ignored (SIGKILL and SIGSTOP
cannot be)."""


def default_signals() -> None:
    """``preexec_fn``: SIGINT and SIGTERM at their default actions in the child, as a shell
    in a terminal starts a command."""
    for sig in SIGNALS_SENT:
        signal.signal(sig, signal.SIG_DFL)
