#!/usr/bin/env python3
"""server_pg_concurrency.py - many tilebench-server processes, one truth (issue 30): two server
processes on one PostgreSQL database (run under tests/with_postgres.sh, CTest
server_pg_concurrency, label postgres), then
  conc-1  20 concurrent submissions of one document under one idempotency key, spread over both
          processes: exactly one row, one 201 and nineteen 200 naming its id;
  conc-2  the same key with another document through the other process: 422;
  conc-3  200 distinct concurrent submissions spread over both: 200 rows, 200 ids, each answer
          naming the very document it sent, the board's generation moved by exactly 200;
  conc-4  the rankings (JSON board, HTML board, list of boards, the JSON list) read through
          either process are byte-identical, and hold every row;
  conc-5  each process's cached board is never stale: read (and cached) through one, a
          submission through the other, read again through the first: it is there, 10 times,
          both ways;
  conc-6  the per-token rate holds across processes: two more processes with --rate 6 on the same
          database, 12 submissions of one token alternating between them: 6 taken, 6 refused 429.
Python's standard library only (rows counted through libpq by tests/server_dbs.py); every socket
has a timeout; about 4 s. Prints one line per check; exit 1 on any failure.
Environment: TB, TB_BUILD, TB_SRC (CTest), TB_PG (with_postgres.sh).
"""
import copy, hashlib, http.client, json, os, select, subprocess, sys, tempfile, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import server_dbs

if not server_dbs.PG:
    sys.exit("FAIL conc-0: run me under tests/with_postgres.sh")
TB, BUILD, SRC = os.environ["TB"], os.environ["TB_BUILD"], os.environ["TB_SRC"]
SERVER = os.path.join(BUILD, "bin", "tilebench-server")
tmp = tempfile.TemporaryDirectory(prefix="tb-conc-")
os.chdir(tmp.name)
checks = server_dbs.Checks()
check = checks.check


def sh(*argv):
    return server_dbs.sh(*argv, timeout=30)


procs = []


die_with_parent = server_dbs.die_with_parent


def server(db, *flags):
    log = open(f"server{len(procs)}.log", "w")
    p = subprocess.Popen([SERVER, "--port", "0", "--db", db, "--shapes-dir", os.path.join(SRC, "results", "shapes"), *flags],
                         stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=die_with_parent)
    procs.append(p)
    r, _, _ = select.select([p.stdout], [], [], 20)
    line = p.stdout.readline() if r else ""
    if not line.startswith("listening on 127.0.0.1:"):
        p.kill()
        sys.exit(f"FAIL conc-0: a server did not start: {line!r} {open(log.name).read()}")
    return int(line.rsplit(":", 1)[1])


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def post(port, token, doc, key=None):
    h = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    if key:
        h["Idempotency-Key"] = key
    return request(port, "POST", "/api/v1/submissions", doc, h)


def at_once(calls):
    """Run each call (a function of no argument) on its own thread, all released together;
    their results in order."""
    out, go = [None] * len(calls), threading.Barrier(len(calls))
    def run(i):
        go.wait()
        out[i] = calls[i]()
    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    [t.start() for t in ts]
    [t.join(60) for t in ts]
    return out


try:
    # the document: the fixture's run as an H100 SXM (132 SMs of sm_90), as server_hostile.py does
    sh(os.path.join(BUILD, "tests", "make_gate_fixture"), "g.db")
    sh(TB, "export", "--db", "g.db", "--run", "2", "--format", "submission", "--output", "good.json")
    GOOD = json.load(open("good.json"))
    GOOD["environment"].update(compute_capability="9.0", sm_count=132)
    serial = [0]
    def fresh(tag="c"):
        d = copy.deepcopy(GOOD)
        serial[0] += 1
        d["tilebench"]["git_sha"] = f"{tag}{serial[0]}"
        return json.dumps(d).encode()

    DB = server_dbs.newdb("conc")
    tok = {n: sh(SERVER, "token", "add", n, "--db", DB).strip() for n in ("alice", "bob", "rated")}
    A = server(DB, "--rate", "0")
    B = server(DB, "--rate", "0")
    ports = [A, B]
    db = server_dbs.connect(DB)
    count = lambda: db.execute("SELECT count(*) FROM submissions").fetchone()[0]
    gen = lambda: (db.execute("SELECT coalesce(sum(generation), 0) FROM board_generations").fetchone()[0])
    t_start = time.time()

    # conc-1: one key, 20 at once, over both processes
    doc = fresh()
    n0 = count()
    res = at_once([lambda i=i: post(ports[i % 2], tok["alice"], doc, "one-key") for i in range(20)])
    codes = sorted(s for s, _ in res)
    ids = {json.loads(b)["id"] for s, b in res if s in (200, 201)}
    check(codes == [200] * 19 + [201] and len(ids) == 1 and count() == n0 + 1, "conc-1 one key, 20 at once over two processes: one row",
          f"codes {codes}, ids {ids}, rows {count() - n0}")
    replayed = [json.loads(b).get("replayed") for s, b in res]
    check(replayed.count(False) == 1 and replayed.count(True) == 19, "conc-1b one 201 and nineteen replays", f"{replayed}")
    first = next(iter(ids)) if ids else None
    # conc-2: the same key with another document, through either process
    s1, b1 = post(A, tok["alice"], fresh(), "one-key")
    s2, b2 = post(B, tok["alice"], fresh(), "one-key")
    check(s1 == s2 == 422 and b"another document" in b1 and count() == n0 + 1, "conc-2 the key with another document: 422 from both",
          f"HTTP {s1} {s2} {b1[:120]!r}")

    # conc-3: 200 distinct at once, over both processes and two tokens
    n0, g0 = count(), gen()
    docs = [fresh() for _ in range(200)]
    res = at_once([lambda i=i: post(ports[i % 2], tok["alice" if i % 4 < 2 else "bob"], docs[i]) for i in range(200)])
    codes = [s for s, _ in res]
    ids = [json.loads(b)["id"] for s, b in res if s == 201]
    right = 0
    for (s, b), sent in zip(res, docs):
        if s == 201:
            row = db.execute("SELECT md5(document) FROM submissions WHERE id = ?", (json.loads(b)["id"],)).fetchone()
            right += row is not None and row[0] == hashlib.md5(sent).hexdigest()
    check(codes.count(201) == 200 and len(set(ids)) == 200 and count() == n0 + 200, "conc-3 200 documents at once over two processes: 200 rows",
          f"{codes.count(201)} 201s ({sorted(set(codes))}), {len(set(ids))} ids, {count() - n0} rows")
    check(right == 200, "conc-3b each answer names the document it sent", f"{right} of 200")
    check(gen() - g0 == 200, "conc-3c the board's generation moved with every row, in its transaction", f"moved by {gen() - g0}")

    # conc-4: the same rankings through either process, byte for byte
    paths = ["/api/v1/leaderboards/square/fixture%20GPU", "/leaderboards/square/fixture%20GPU", "/", "/api/v1/leaderboards",
             f"/submissions/{first}"]
    for p in paths:   # read twice through each (the second from its cache)
        got = [request(port, "GET", p) for port in (A, B, A, B)]
        check(all(g == got[0] for g in got) and got[0][0] == 200, f"conc-4 {p} byte-identical through both processes",
              f"{[(s, len(b), hashlib.md5(b).hexdigest()[:8]) for s, b in got]}")
    st, j = request(A, "GET", paths[0])
    check(st == 200 and len(json.loads(j)) == count(), "conc-4b the board ranks every row", f"{len(json.loads(j))} of {count()}")

    # conc-5: a board cached by one process is not served stale after the other stores one
    stale = []
    for i in range(10):
        reader, writer = (A, B) if i % 2 == 0 else (B, A)
        request(reader, "GET", paths[0]); request(reader, "GET", paths[1])   # cached now
        s, b = post(writer, tok["bob"], fresh())
        new = json.loads(b).get("id") if s == 201 else None
        sj, j = request(reader, "GET", paths[0])
        sh_, h = request(reader, "GET", paths[1])
        if s != 201 or not any(e["submission"] == new for e in json.loads(j)) or f'/submissions/{new}"'.encode() not in h:
            stale.append((i, s, new))
    check(not stale, "conc-5 a cached board after another process's submission holds it (10 times, both ways)", f"{stale}")

    # conc-6: the rate, shared: two more processes with --rate 6 on the same database
    C = server(DB, "--rate", "6")
    D = server(DB, "--rate", "6")
    codes = [post((C, D)[i % 2], tok["rated"], fresh())[0] for i in range(12)]
    check(codes.count(201) == 6 and codes.count(429) == 6, "conc-6 --rate 6 over two processes: 6 taken, 6 refused",
          f"{codes}")
    print(f"conc: {len(procs)} server processes on one database, {count()} rows, {time.time() - t_start:.1f} s", flush=True)
    for p in procs:
        p.terminate()
    check(all(p.wait(10) == 0 for p in procs), "conc-7 SIGTERM stops every process cleanly", "")
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
sys.exit(1 if checks.failed else 0)
