"""``python -m vidapi_async.cli``."""

from ._main import main

raise SystemExit(main())
