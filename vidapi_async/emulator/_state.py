"""The emulator's state: accounts, tokens, uploads, videos and subtitles, in SQLite.

Kept apart from the HTTP handlers (moto's split): handlers parse requests and call these
methods; these know nothing of HTTP. In-process emulators use an in-memory database; a
standalone server with ``--data-dir`` keeps ``state.sqlite`` there and so survives a
restart. Objects are JSON documents in one table, one kind of object per ``kind``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import quote

__all__ = ["ALL_SCOPES", "State"]

ALL_SCOPES = (
    "email",
    "userinfo",
    "manage_videos",
    "manage_playlists",
    "manage_players",
    "manage_subtitles",
    "manage_likes",
    "manage_podcasts",
    "manage_subscriptions",
)

_SCHEMA = """
create table if not exists objects (
    kind text not null,
    id text not null,
    data text not null,
    created real not null,
    primary key (kind, id)
);
create table if not exists meta (key text primary key, value text not null);
"""


def new_id() -> str:
    """A platform-shaped id: 'x' and lowercase letters and digits."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "x" + "".join(secrets.choice(alphabet) for _ in range(6))


class State:
    """All emulator state. ``path=None`` keeps it in memory."""

    def __init__(self, path: str | None = None, *, escaped_seals: bool = True) -> None:
        self.path = path
        self.escaped_seals = escaped_seals
        self._db = sqlite3.connect(path or ":memory:", isolation_level=None)
        if path:
            # Handlers call in here on the event loop: WAL without an fsync per write keeps
            # each call short, and still survives a crash of the server process.
            self._db.execute("pragma journal_mode=wal")
            self._db.execute("pragma synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        secret = self._meta("seal_secret")
        if secret is None:
            secret = secrets.token_hex(16)
            self._db.execute("insert into meta values ('seal_secret', ?)", (secret,))
        self._seal_secret = secret.encode()

    def close(self) -> None:
        self._db.close()

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("select value from meta where key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # --- documents -------------------------------------------------------------------------

    def put(self, kind: str, id: str, data: dict[str, Any]) -> dict[str, Any]:
        self._db.execute(
            "insert into objects values (?, ?, ?, ?) on conflict (kind, id) do update "
            "set data = excluded.data",
            (kind, id, json.dumps(data), time.time()),
        )
        return data

    def get(self, kind: str, id: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "select data from objects where kind = ? and id = ?", (kind, id)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def delete(self, kind: str, id: str) -> bool:
        cur = self._db.execute("delete from objects where kind = ? and id = ?", (kind, id))
        return cur.rowcount > 0

    def all(self, kind: str) -> Iterator[dict[str, Any]]:
        rows = self._db.execute(
            "select data from objects where kind = ? order by created, rowid", (kind,)
        ).fetchall()
        for (data,) in rows:
            yield dict(json.loads(data))

    def count(self, kind: str) -> int:
        row = self._db.execute("select count(*) from objects where kind = ?", (kind,)).fetchone()
        return int(row[0])

    def reset(self) -> None:
        """Forget every object; accounts and tokens configured at start are re-added."""
        self._db.execute("delete from objects")

    # --- tokens ----------------------------------------------------------------------------

    def issue_token(
        self,
        *,
        owner: str,
        scopes: Iterable[str],
        lifetime: float,
        refresh: bool = True,
        token: str | None = None,
    ) -> dict[str, Any]:
        access = token or secrets.token_urlsafe(24)
        record = {
            "id": access,
            "owner": owner,
            "scopes": sorted(set(scopes)),
            "expires_at": time.time() + lifetime,
        }
        self.put("token", access, record)
        if refresh:
            refresh_token = secrets.token_urlsafe(24)
            record["refresh_token"] = refresh_token
            self.put(
                "refresh_token",
                refresh_token,
                {"id": refresh_token, "owner": owner, "scopes": record["scopes"]},
            )
        return record

    def token(self, access: str) -> dict[str, Any] | None:
        return self.get("token", access)

    def revoke_tokens(self, owner: str) -> None:
        for kind in ("token", "refresh_token"):
            for record in list(self.all(kind)):
                if record["owner"] == owner:
                    self.delete(kind, record["id"])

    # --- uploads ---------------------------------------------------------------------------

    def seal(self, uuid: str) -> str:
        """The upload's seal as it stands in its address: two halves of the standard
        base64 of an HMAC joined by '/', percent-escaped. Every seal holds ``%2F`` and
        (17 bytes make a '=' pad) ``%3D``, many ``%2B``: a client that re-encodes the
        address (``%2F`` sent as ``/``) breaks it and is refused. With
        ``escaped_seals=False``, plain hex."""
        digest = hmac.new(self._seal_secret, uuid.encode(), hashlib.sha256).digest()[:17]
        if not self.escaped_seals:
            return digest.hex()
        text = base64.b64encode(digest).decode()
        return quote(f"{text[:12]}/{text[12:]}", safe="")

    def seal_ok(self, uuid: str, raw_seal: str) -> bool:
        """Whether ``raw_seal``, as it arrived in the request target, is the seal."""
        return hmac.compare_digest(self.seal(uuid).encode(), raw_seal.encode())

    def new_upload(self, owner: str) -> dict[str, Any]:
        uuid = secrets.token_hex(16)
        return self.put(
            "upload",
            uuid,
            {
                "id": uuid,
                "owner": owner,
                "state": "starting",
                "size": None,
                "received": 0,
                "ranges": [],
                "descriptor": None,
            },
        )

    def quota_left(self, owner: str, per_day: int | None) -> bool:
        if per_day is None:
            return True
        since = time.time() - 86400
        made = sum(
            1 for v in self.all("video") if v["owner"] == owner and v["created_time"] >= since
        )
        return made < per_day
