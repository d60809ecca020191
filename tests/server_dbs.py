"""server_dbs.py - what the server's Python tests share to run against either storage engine: a
new database for a server's --db (an SQLite file in the current directory, or, when TB_PG is set
by tests/with_postgres.sh, a new database of that throwaway PostgreSQL cluster), and a read-only
connection to it for counting rows (sqlite3, or libpq itself through ctypes: the tests use
Python's standard library only). docs/server.md, "Tests".
"""
import ctypes, os, re, sqlite3, subprocess

PG = os.environ.get("TB_PG") or None
ENGINE = "PostgreSQL" if PG else "SQLite"


def newdb(name):
    """The --db argument of a new, empty database called name."""
    if not PG:
        return name + ".db"
    return subprocess.run([os.path.join(PG, "createdb"), name], check=True, capture_output=True,
                          text=True, timeout=30).stdout.strip()


# SQL the engines spell differently
CONTAINS = "strpos(document, ?) > 0" if PG else "instr(document, ?)"   # a document holds a text
SCHEMA_OBJECTS = ("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                  "WHERE n.nspname = 'public'") if PG else "SELECT count(*) FROM sqlite_master"


class _Rows:
    def __init__(self, rows):
        self.rows = rows

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self):
        return self.rows


class _PG:
    """The least of libpq for counting rows: one connection, PQexecParams, rows as Python values
    (a whole number as int, anything else as str). '?' placeholders become $1, $2, ..."""
    def __init__(self, uri):
        pq = self.pq = ctypes.CDLL("libpq.so.5")
        vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
        pq.PQconnectdb.restype, pq.PQconnectdb.argtypes = vp, [cp]
        pq.PQstatus.restype, pq.PQstatus.argtypes = ci, [vp]
        pq.PQerrorMessage.restype, pq.PQerrorMessage.argtypes = cp, [vp]
        pq.PQexecParams.restype = vp
        pq.PQexecParams.argtypes = [vp, cp, ci, vp, ctypes.POINTER(cp), vp, vp, ci]
        pq.PQresultStatus.restype, pq.PQresultStatus.argtypes = ci, [vp]
        pq.PQresultErrorMessage.restype, pq.PQresultErrorMessage.argtypes = cp, [vp]
        pq.PQntuples.restype, pq.PQntuples.argtypes = ci, [vp]
        pq.PQnfields.restype, pq.PQnfields.argtypes = ci, [vp]
        pq.PQgetvalue.restype, pq.PQgetvalue.argtypes = cp, [vp, ci, ci]
        pq.PQgetisnull.restype, pq.PQgetisnull.argtypes = ci, [vp, ci, ci]
        pq.PQclear.restype, pq.PQclear.argtypes = None, [vp]
        pq.PQfinish.restype, pq.PQfinish.argtypes = None, [vp]
        self.c = pq.PQconnectdb(uri.encode())
        if pq.PQstatus(self.c) != 0:   # CONNECTION_OK
            raise RuntimeError("cannot connect: " + pq.PQerrorMessage(self.c).decode(errors="replace"))

    def execute(self, sql, params=()):
        pq, n = self.pq, [0]
        def dollar(_):
            n[0] += 1
            return "$%d" % n[0]
        sql = re.sub(r"\?", dollar, sql)
        vals = (ctypes.c_char_p * len(params))(*[str(p).encode() for p in params]) if params else None
        r = pq.PQexecParams(self.c, sql.encode(), len(params), None, vals, None, None, 0)
        if pq.PQresultStatus(r) not in (1, 2):   # PGRES_COMMAND_OK, PGRES_TUPLES_OK
            why = pq.PQresultErrorMessage(r).decode(errors="replace")
            pq.PQclear(r)
            raise RuntimeError(f"{sql}: {why}")
        rows = []
        for i in range(pq.PQntuples(r)):
            row = []
            for j in range(pq.PQnfields(r)):
                if pq.PQgetisnull(r, i, j):
                    row.append(None)
                    continue
                v = pq.PQgetvalue(r, i, j).decode()
                row.append(int(v) if re.fullmatch(r"-?[0-9]+", v) else v)
            rows.append(tuple(row))
        pq.PQclear(r)
        return _Rows(rows)

    def close(self):
        if self.c:
            self.pq.PQfinish(self.c)
            self.c = None


def connect(db):
    """A connection to the database db (newdb's value) for reading: .execute(sql, params).fetchone()"""
    if PG:
        return _PG(db)
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)


class Checks:
    """The ok/FAIL lines the server's tests print, one per check, and how many failed."""

    def __init__(self):
        self.failed = 0

    def check(self, ok, id, why=""):
        print(("ok   " if ok else "FAIL ") + id + ("" if ok else ": " + why), flush=True)
        self.failed += not ok


def sh(*argv, timeout=30):
    """A command's standard output; it must succeed within timeout seconds."""
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=timeout).stdout


def die_with_parent():
    """For subprocess preexec_fn: a killed test takes its servers along (PR_SET_PDEATHSIG)."""
    import signal
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)
