"""A real PostgreSQL server for the tests: Debian's ``postgresql`` package (``initdb``,
``pg_ctl``) in a temporary directory, on a free port of 127.0.0.1, with a password
(scram-sha-256), started once per test session. As root (CI), the server runs as
``nobody``: PostgreSQL refuses to run as root. ``skip_reason`` says why none can start."""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

USER = "ikigai"
PASSWORD = "pw-Xq7!s3cret"
"""The URL's password: no output of ikigai may show it."""


def bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: ``$IKIGAI_TEST_PG_BIN``, next to the
    ``pg_ctl`` on PATH (a link, as /usr/local/bin/pg_ctl, is followed), or Debian's newest
    ``/usr/lib/postgresql/N/bin``."""
    given = os.environ.get("IKIGAI_TEST_PG_BIN")
    on_path = shutil.which("pg_ctl")
    candidates = [Path(given)] if given else []
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                           key=lambda p: int(Path(p).parent.name),
                                           reverse=True)]
    return next((c for c in candidates if (c / "initdb").exists()), None)


def skip_reason() -> str | None:
    """Why no server can start here, or ``None``."""
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed (pip install -e ikigai_stores/postgres)"
    if bindir() is None:
        return "no PostgreSQL server programs (apt-get install postgresql)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One server in its own directory; :meth:`database` makes a fresh database."""

    def __init__(self) -> None:
        found = bindir()
        assert found is not None
        self.bin = found
        self.root = Path(tempfile.mkdtemp(prefix="ikigai-pg-"))
        self.port = _free_port()
        self.as_nobody = os.geteuid() == 0
        self.count = 0

    def _run(self, *args: str, timeout: float = 60) -> None:
        user = {"user": "nobody", "group": "nogroup", "extra_groups": []} \
            if self.as_nobody else {}
        done = subprocess.run([str(self.bin / args[0]), *args[1:]], capture_output=True,
                              text=True, timeout=timeout, cwd=self.root, check=False, **user)
        if done.returncode != 0:
            log = self.root / "log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stderr.strip()} {tail}")

    def start(self) -> None:
        """initdb and start (about 2 s)."""
        (self.root / "pw").write_text(PASSWORD)
        if self.as_nobody:
            shutil.chown(self.root, "nobody", "nogroup")
            shutil.chown(self.root / "pw", "nobody", "nogroup")
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", USER, f"--pwfile={self.root / 'pw'}",
                  "--auth=scram-sha-256", "--locale=C", "-E", "UTF8", "--no-sync")
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                   "-c max_connections=250")
        self._run("pg_ctl", "-D", str(data), "-l", str(self.root / "log"), "-w", "-t", "60",
                  "-o", options, "start")

    def stop(self) -> None:
        """Stop the server and delete its directory."""
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w",
                      "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """The URL of a new, empty database."""
        import psycopg

        self.count += 1
        name = f"t{self.count}"
        with psycopg.connect(self.url(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self.url(name)
