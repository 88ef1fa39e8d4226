# SPDX-License-Identifier: MIT
"""A private PostgreSQL server for tests and benchmarks: Debian's initdb and pg_ctl on a
data directory of its own, reached through a Unix socket in that directory only (no TCP
port, nothing shared with a cluster of the machine). initdb refuses root, so as root the
server runs as the `postgres` user, as the local LAVA lab's cluster does."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

HOW_TO_INSTALL = "apt-get install postgresql (Debian's initdb and pg_ctl)"


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin directory with initdb and pg_ctl."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    for directory in reversed(found):
        if all(os.access(f"{directory}/{tool}", os.X_OK) for tool in ("initdb", "pg_ctl")):
            return Path(directory)
    return None


class PostgresServer:
    """Start with start(), stop with stop(); `url` is a psycopg URL to its `postgres` db."""

    def __init__(self, *, durable: bool = True) -> None:
        self.bin = binaries()
        self.durable = durable  # False: fsync off, for tests that only need a real server
        self.base: Path | None = None

    def _as_owner(self) -> list[str]:
        return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def start(self) -> str:
        if self.bin is None:
            raise RuntimeError(f"PostgreSQL missing: {HOW_TO_INSTALL}")
        self.base = Path(tempfile.mkdtemp(prefix="hwcrypto-pg-"))
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.base, owner.pw_uid, owner.pw_gid)
        data = self.base / "data"
        subprocess.run(
            [*self._as_owner(), str(self.bin / "initdb"), "-D", str(data), "-U", "postgres",
             "-A", "trust", "--no-sync"],
            check=True, capture_output=True,
        )  # fmt: skip
        options = f"-k {self.base} -c listen_addresses='' -c max_connections=60"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        subprocess.run(
            [*self._as_owner(), str(self.bin / "pg_ctl"), "-D", str(data), "-w", "-t", "60",
             "-l", str(self.base / "log"), "-o", options, "start"],
            check=True, capture_output=True,
        )  # fmt: skip
        return self.url()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql:///{database}?host={self.base}&user=postgres"

    def psql(self, sql: str, database: str = "postgres") -> str:
        assert self.bin is not None and self.base is not None
        done = subprocess.run(
            [*self._as_owner(), str(self.bin / "psql"), "-h", str(self.base), "-U", "postgres",
             "-d", database, "-qtA", "-c", sql],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        return done.stdout

    def stop(self) -> None:
        if self.base is None or self.bin is None:
            return
        subprocess.run(
            [*self._as_owner(), str(self.bin / "pg_ctl"), "-D", str(self.base / "data"),
             "-m", "immediate", "-w", "stop"],
            check=False, capture_output=True,
        )  # fmt: skip
        shutil.rmtree(self.base, ignore_errors=True)
        self.base = None
