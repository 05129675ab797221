"""A real PostgreSQL server for the tests, started and stopped by the test session itself.

:func:`pg_server` is a session-scoped pytest fixture (import it into a test module or a conftest):
it runs ``initdb`` into a fresh temporary folder, starts ``postgres`` on 127.0.0.1 with a free port
(and its unix socket in that folder, never in /var/run), waits until it accepts connections, and stops
it (fast shutdown) and removes the folder when the session ends.  With pytest-xdist each worker that
needs it starts its own server.

The binaries are looked up in ``$CS224V_PG_BIN`` (a folder), then the newest
``/usr/lib/postgresql/<version>/bin`` (the Debian ``postgresql`` package), then ``$PATH``.  Without
them, or without psycopg, every test that uses the fixture is skipped with the reason, and the reason is
also issued as a warning so it shows in pytest's summary even without ``-rs``.

PostgreSQL refuses to run as root.  When the tests run as root (CI, containers), initdb and postgres run
as an unprivileged user instead: ``$CS224V_PG_USER``, else ``postgres`` (the Debian package creates it),
else ``nobody``; the temporary folder is created outside pytest's root-only basetemp and handed to that
user.  Python's ``subprocess`` switches user (``user=``, ``group=``, ``extra_groups=[]``), so neither
``runuser`` nor ``sudo`` is needed.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

STARTUP_TIMEOUT_S = 30.0


def _version_key(path: str) -> tuple[int, ...]:
    parts = Path(path).parent.name.split(".")
    return tuple(int(p) for p in parts if p.isdigit())


def find_bin_dir() -> Path | None:
    """The folder holding initdb and postgres, or None."""
    candidates: list[str] = []
    if env := os.environ.get("CS224V_PG_BIN"):
        candidates.append(env)
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    if found := shutil.which("postgres"):
        candidates.append(str(Path(found).parent))
    for folder in candidates:
        if all(os.access(Path(folder, name), os.X_OK) for name in ("initdb", "postgres")):
            return Path(folder)
    return None


def _run_as() -> pwd.struct_passwd | None:
    """The user to run PostgreSQL as when we are root; None when we are not root."""
    if os.geteuid() != 0:
        return None
    for name in (os.environ.get("CS224V_PG_USER"), "postgres", "nobody"):
        if not name:
            continue
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("The tests run as root and no unprivileged user (postgres, nobody) exists to run PostgreSQL.")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgServer:
    bin_dir: Path
    root: Path
    port: int
    process: subprocess.Popen
    user: pwd.struct_passwd | None
    has_pg_stat_statements: bool

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def admin(self, database: str = "postgres"):
        """A superuser connection in autocommit mode (for fixtures only)."""
        import psycopg

        return psycopg.connect(self.url(database), autocommit=True, connect_timeout=5)

    def create_database(self, name: str) -> str:
        from psycopg import sql

        with self.admin() as con:
            con.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'").format(sql.Identifier(name))
            )
        return self.url(name)

    def log(self) -> str:
        try:
            return (self.root / "postgres.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # immediate shutdown: no checkpoint, the data is thrown away
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        shutil.rmtree(self.root, ignore_errors=True)


def _as_user(user: pwd.struct_passwd | None) -> dict:
    if user is None:
        return {}
    return {
        "user": user.pw_uid,
        "group": user.pw_gid,
        "extra_groups": [],
        "env": {**os.environ, "HOME": str(tempfile.gettempdir()), "USER": user.pw_name},
    }


def start_server(bin_dir: Path) -> PgServer:
    """initdb + postgres on a free port; raises RuntimeError with the server's log when it cannot start."""
    user = _run_as()
    root = Path(tempfile.mkdtemp(prefix="cs224v-pg-"))  # in /tmp itself: pytest's basetemp is root-only
    data, sock = root / "data", root / "socket"
    sock.mkdir()
    if user is not None:
        for path in (root, sock):
            os.chown(path, user.pw_uid, user.pw_gid)
    os.chmod(root, 0o700)
    try:
        subprocess.run(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C",
             "--no-sync", "--no-instructions"],
            check=True, capture_output=True, text=True, timeout=120, **_as_user(user),
        )  # fmt: skip
    except subprocess.CalledProcessError as e:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {e.stderr or e.stdout}") from e
    try:
        share = subprocess.run([str(bin_dir / "pg_config"), "--sharedir"], capture_output=True, text=True).stdout
    except OSError:  # no pg_config beside the server: run without pg_stat_statements
        share = ""
    ext_dir = Path(share.strip() or "/nonexistent")
    has_pss = (ext_dir / "extension" / "pg_stat_statements.control").exists()
    last_error = ""
    for _attempt in range(3):  # a free port can be taken between the probe and the bind: retry
        port = _free_port()
        options = ["-c", "listen_addresses=127.0.0.1", "-p", str(port), "-k", str(sock), "-c", "fsync=off",
                   "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=40",
                   "-c", "shared_buffers=32MB"]  # fmt: skip
        if has_pss:
            options += ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all"]
        log = open(root / "postgres.log", "ab")  # the server writes it until it stops
        try:
            process = subprocess.Popen(
                [str(bin_dir / "postgres"), "-D", str(data), *options],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **_as_user(user),
            )  # fmt: skip
        finally:
            log.close()
        server = PgServer(bin_dir, root, port, process, user, has_pss)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    pass
                server.admin().close()
                return server
            except OSError:
                time.sleep(0.1)
            except Exception:  # psycopg.OperationalError: "the database system is starting up"
                time.sleep(0.1)
        last_error = server.log()
        if process.poll() is None:
            process.kill()
            process.wait(5)
    shutil.rmtree(root, ignore_errors=True)
    raise RuntimeError(f"PostgreSQL did not start: {last_error}")


def skip_reason() -> str | None:
    """Why the PostgreSQL tests cannot run here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'psycopg[binary]')"
    if find_bin_dir() is None:
        return (
            "no PostgreSQL server binaries (initdb, postgres) found in $CS224V_PG_BIN, /usr/lib/postgresql/*/bin "
            "or $PATH; install the Debian package: apt-get install -y postgresql"
        )
    return None


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    reason = skip_reason()
    if reason is not None:
        warnings.warn(pytest.PytestWarning(f"PostgreSQL tests skipped: {reason}"), stacklevel=1)
        pytest.skip(f"PostgreSQL tests skipped: {reason}")
    bin_dir = find_bin_dir()
    assert bin_dir is not None
    server = start_server(bin_dir)
    try:
        yield server
    finally:
        server.stop()


# --- data for the tests ------------------------------------------------------------------------------------


def load_restaurants(url: str, world) -> None:
    """The restaurants world as a PostgreSQL table with the DuckDB world's column types: ``_id`` the
    primary key, ``price`` an enum type in the same order, lists as ``text[]``."""
    import duckdb
    import psycopg

    duck = duckdb.connect()
    world.load(duck)
    rows = duck.execute(
        "SELECT _id, name, cuisines, price::VARCHAR, rating, num_reviews, address, phone_number, opening_hours, "
        "location, reviews, popular_dishes FROM restaurants ORDER BY _id"
    ).fetchall()
    duck.close()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE TYPE price_level AS ENUM ('cheap', 'moderate', 'expensive', 'luxury')")
        con.execute(
            "CREATE TABLE restaurants (_id integer PRIMARY KEY, name text, cuisines text[], price price_level, "
            "rating numeric(2,1), num_reviews integer, address text, phone_number text, opening_hours text, "
            "location text, reviews text[], popular_dishes text[])"
        )
        with con.cursor() as cur:
            with cur.copy(
                "COPY restaurants (_id, name, cuisines, price, rating, num_reviews, address, phone_number, "
                "opening_hours, location, reviews, popular_dishes) FROM STDIN"
            ) as copy:
                for row in rows:
                    copy.write_row(row)
        con.execute("ANALYZE restaurants")


def load_synthetic(url: str, n: int = 100_000) -> None:
    """``items``: ``n`` rows made by generate_series — an id, a category, a number, a short text."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as con:
        con.execute(
            f"CREATE TABLE items AS SELECT g AS id, (ARRAY['red','green','blue','black'])[1 + g % 4] AS color, "
            "((g::bigint * 7919) % 1000)::int AS score, 'Item number ' || g || CASE WHEN g % 10 = 0 THEN ' is quiet and cosy' "
            f"ELSE ' is loud' END AS note FROM generate_series(1, {int(n)}) AS g"
        )
        con.execute("ALTER TABLE items ADD PRIMARY KEY (id)")
        con.execute("CREATE INDEX items_score ON items (score)")
        con.execute("ANALYZE items")
