"""How many examples a hypothesis test tries: its full count in a run with the system
lane (``python -m pytest``, ``.ci/run``, ``-m system``), a quarter of it in the everyday
lane (``-m "not system"``), where the property tests were 19 s of the lane's CPU
(docs/development.md). ``tests/conftest.py`` tells it the lane before collection."""

from __future__ import annotations

EVERYDAY_SHARE = 4
everyday = False
"""Set by ``tests/conftest.py`` (``pytest_configure``) when the run is the everyday lane."""


def examples(full: int) -> int:
    """``full`` examples, or a quarter of them (at least 25) in the everyday lane."""
    return max(25, full // EVERYDAY_SHARE) if everyday else full
