#!/usr/bin/env python3
"""server_pg_fault.py - PostgreSQL restarted under load (issue 30): a tilebench-server on a
throwaway cluster (run under tests/with_postgres.sh, CTest server_pg_fault, label postgres), a
bounded loopback load (6 threads submitting new documents, each under its own idempotency key,
retrying a 503 with the same key and body; 2 threads reading the JSON and HTML boards) for 7 s,
and meanwhile `pg_ctl restart -m fast` (t = 1.5 s) and `pg_ctl restart -m immediate` (t = 4 s: a
crash, recovered at start). Then:
  fault-1  every request was answered (no reset, no timeout), with 201, 503, or 200 (a replay)
           only on a retry after a 503; every read with 200 or 503;
  fault-2  the restarts were seen (some 503s), and each 503 has its own one-line log entry saying
           why; every log line is one request's;
  fault-3  every submission ended stored (the client's retry succeeded);
  fault-4  nothing half-written: the rows are exactly the keys answered 201 or 200, each holding
           the very document sent, and the board's generation moved once per row (the row and its
           generation are one transaction);
  fault-5  the server served again (a 200) within 5 s of each restart's end, by itself;
  fault-6  a restart while the server is idle costs no error: the next requests find their
           pooled connections dead and run again on new ones;
  fault-7  the process is still up and stops cleanly on SIGTERM.
Python's standard library only; every socket has a timeout; about 12 s. Prints one line per
check and the figures; exit 1 on any failure. Environment: TB, TB_BUILD, TB_SRC (CTest), TB_PG.
"""
import copy, hashlib, http.client, json, os, re, select, subprocess, sys, tempfile, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import server_dbs

if not server_dbs.PG:
    sys.exit("FAIL fault-0: run me under tests/with_postgres.sh")
TB, BUILD, SRC = os.environ["TB"], os.environ["TB_BUILD"], os.environ["TB_SRC"]
SERVER = os.path.join(BUILD, "bin", "tilebench-server")
PG_CTL = os.path.join(server_dbs.PG, "pg_ctl")
LOAD_S, POSTERS, READERS = 7.0, 6, 2
RESTARTS = ((1.5, "fast"), (4.0, "immediate"))
tmp = tempfile.TemporaryDirectory(prefix="tb-fault-")
os.chdir(tmp.name)
checks = server_dbs.Checks()
check = checks.check


def sh(*argv):
    return server_dbs.sh(*argv, timeout=60)


die_with_parent = server_dbs.die_with_parent


def request(method, path, body=None, headers=None, timeout=20):
    """(status, body), or (None, why) when the connection failed or timed out"""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException) as e:
        return None, repr(e).encode()
    finally:
        c.close()


sh(os.path.join(BUILD, "tests", "make_gate_fixture"), "g.db")
sh(TB, "export", "--db", "g.db", "--run", "2", "--format", "submission", "--output", "good.json")
GOOD = json.load(open("good.json"))
GOOD["environment"].update(compute_capability="9.0", sm_count=132)

def doc(tag):
    d = copy.deepcopy(GOOD)
    d["tilebench"]["git_sha"] = tag
    return json.dumps(d).encode()

DB = server_dbs.newdb("fault")
TOKEN = sh(SERVER, "token", "add", "alice", "--db", DB).strip()
AUTH = {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}
log = open("server.log", "w")
srv = subprocess.Popen([SERVER, "--port", "0", "--db", DB, "--rate", "0", "--shapes-dir", os.path.join(SRC, "results", "shapes")],
                       stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=die_with_parent)
try:
    r, _, _ = select.select([srv.stdout], [], [], 20)
    line = srv.stdout.readline() if r else ""
    if not line.startswith("listening on 127.0.0.1:"):
        sys.exit(f"FAIL fault-0: the server did not start: {line!r} {open('server.log').read()}")
    PORT = int(line.rsplit(":", 1)[1])
    st, _ = request("POST", "/api/v1/submissions", doc("seed"), dict(AUTH, **{"Idempotency-Key": "seed"}))
    if st != 201:
        sys.exit(f"FAIL fault-0: the seed submission got {st}")
    sent = {"seed": doc("seed")}           # key -> body
    outcome = {"seed": [201]}              # key -> the statuses of its attempts, in order
    reads, lock = [], threading.Lock()
    t0 = time.time()
    stop_at = t0 + LOAD_S

    def poster(k):
        n = 0
        while time.time() < stop_at:
            n += 1
            key = f"fault-{k}-{n}"
            body = doc(key)
            tries = []
            with lock:
                sent[key] = body
                outcome[key] = tries
            time.sleep(0.05)   # a bounded load: at most 20 new submissions a second per thread
            for _ in range(100):   # a 503 is retried with the same key and body, up to 10 s
                st, b = request("POST", "/api/v1/submissions", body, dict(AUTH, **{"Idempotency-Key": key}))
                tries.append(st)
                if st != 503:
                    break
                time.sleep(0.1)

    def reader(k):
        paths = ("/api/v1/leaderboards/square/fixture%20GPU", "/leaderboards/square/fixture%20GPU")
        i = 0
        while time.time() < stop_at:
            st, _ = request("GET", paths[i % 2])
            i += 1
            with lock:
                reads.append(st)

    restarts = []
    def restarter():
        for at, mode in RESTARTS:
            time.sleep(max(0.0, t0 + at - time.time()))
            a = time.time()
            rc = subprocess.run([PG_CTL, "restart", "-m", mode, "-w", "-t", "60"], capture_output=True, text=True).returncode
            b = time.time()
            back = None   # the server answers a store-backed read again
            while time.time() < b + 10:
                st, _ = request("GET", "/api/v1/leaderboards", timeout=5)
                if st == 200:
                    back = time.time()
                    break
                time.sleep(0.02)
            restarts.append((mode, rc, a - t0, b - a, None if back is None else back - b))

    threads = [threading.Thread(target=poster, args=(k,)) for k in range(POSTERS)]
    threads += [threading.Thread(target=reader, args=(k,)) for k in range(READERS)]
    threads.append(threading.Thread(target=restarter))
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    took = time.time() - t0

    posts = [s for tries in outcome.values() for s in tries]
    n503 = posts.count(503) + reads.count(503)
    print(f"fault: {len(outcome)} submissions ({len(posts)} requests, {posts.count(503)} answered 503), {len(reads)} reads "
          f"({reads.count(503)} answered 503) in {took:.1f} s", flush=True)
    for mode, rc, at, dur, back in restarts:
        print(f"fault: pg_ctl restart -m {mode} at {at:.1f} s took {dur:.2f} s (exit {rc}); the server answered 200 again "
              f"{'never' if back is None else f'{back:.2f} s'} after it", flush=True)

    lines = open("server.log").read().splitlines()
    bad_post = {k: t for k, t in outcome.items()
                if not t or any(s not in (201, 200, 503) for s in t) or (t[-1] == 200 and 503 not in t[:-1])}
    check(not bad_post and all(s in (200, 503) for s in reads), "fault-1 every request answered 201, 503, or 200 on a retry",
          f"{list(bad_post.items())[:5]} reads {sorted(set(map(str, reads)))}; "
          f"{[l for l in lines if re.search(r' 5[0-9][0-9] ', l) and ' 503 ' not in l][:3]}")
    req_line = re.compile(r"^\d+ (GET|POST) /.* \d{3}( .+)?$")   # a URL may hold a space (a GPU's name)
    odd = [l for l in lines if not req_line.match(l) and not l.startswith("tilebench-server: ")]
    logged503 = [l for l in lines if re.match(r"^\d+ (GET|POST) /.* 503 cannot ", l)]
    check(n503 > 0 and len(logged503) == n503 and not odd,
          "fault-2 the restarts were seen: each 503 has a one-line log entry saying why",
          f"{n503} answered 503, {len(logged503)} logged with a reason; lines not a request's: {odd[:3]}")
    if logged503:
        print(f"fault: e.g. {logged503[0]}", flush=True)
    undone = [k for k, t in outcome.items() if not t or t[-1] not in (200, 201)]
    check(not undone, "fault-3 every submission ended stored (the client's retry succeeded)", f"{undone[:5]}")

    db = server_dbs.connect(DB)
    rows = {r[0]: r[1] for r in db.execute("SELECT idem_key, md5(document) FROM submissions").fetchall()}
    want = {k for k, t in outcome.items() if t and t[-1] in (200, 201)}
    wrong = [k for k in want if rows.get(k) != hashlib.md5(sent[k]).hexdigest()]
    gens = db.execute("SELECT coalesce(sum(generation), 0) FROM board_generations").fetchone()[0]
    check(set(rows) == want and not wrong and gens == len(rows),
          "fault-4 nothing half-written: one whole row per stored key, and one generation per row",
          f"{len(rows)} rows for {len(want)} keys ({len(set(rows) - want)} unasked, {len(want - set(rows))} missing), "
          f"{len(wrong)} documents differ, generation {gens}")
    check(len(restarts) == len(RESTARTS) and all(rc == 0 and back is not None and back < 5 for _, rc, _, _, back in restarts),
          "fault-5 the server served again within 5 s of each restart, by itself", f"{restarts}")
    # a restart while the server is idle: its pooled connections are all dead, and the next
    # requests run again on new ones, none of them answered 503
    for _ in range(4):   # several pooled connections in use at once, so several go stale
        at_once = [threading.Thread(target=request, args=("GET", "/api/v1/leaderboards/square/fixture%20GPU")) for _ in range(8)]
        [x.start() for x in at_once]; [x.join(30) for x in at_once]
    before = open("server.log").read().count(" 503 ")
    rc = subprocess.run([PG_CTL, "restart", "-m", "fast", "-w", "-t", "60"], capture_output=True).returncode
    after = [request("GET", "/api/v1/leaderboards/square/fixture%20GPU")[0] for _ in range(3)]
    after += [request("POST", "/api/v1/submissions", doc(f"idle-{i}"), dict(AUTH, **{"Idempotency-Key": f"idle-{i}"}))[0] for i in range(3)]
    after += [request("GET", f"/submissions/1")[0] for _ in range(3)]
    check(rc == 0 and after == [200] * 3 + [201] * 3 + [200] * 3 and open("server.log").read().count(" 503 ") == before,
          "fault-6 a restart between requests costs no error: stale pooled connections are replaced", f"exit {rc}, {after}")
    alive = srv.poll() is None
    srv.terminate()
    rc = srv.wait(20)
    check(alive and rc == 0, "fault-7 the server stayed up and stops cleanly on SIGTERM", f"alive {alive}, exit {rc}")
finally:
    if srv.poll() is None:
        srv.kill()
sys.exit(1 if checks.failed else 0)
