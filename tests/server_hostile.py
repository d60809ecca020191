#!/usr/bin/env python3
"""server_hostile.py - tilebench-server under hostile input (issue 18): the server started by its
own binary on a free loopback port, then over a thousand malformed or hostile requests, most
generated from one valid submission by mutating each of its fields in turn (wrong types, bad
numbers, bad strings, missing and extra members), plus broken and deeply nested JSON, big and
slow bodies, bad tokens, replayed idempotency keys, junk in paths and methods, the rate limit
and raw protocol junk. For each: the exact status, a JSON body with "error" for every answer
the server writes itself, and the row counts of the server's database (only a 201 adds a
row); after each batch the process is alive and still answers; a good submission afterwards
still gets 201. Python's standard library only; every socket has a timeout; about 5 s on two
cores, 50 s at most.
Prints one line per failure and "hostile: N requests, M as expected"; exit 1 on any mismatch.
Environment (set by CTest): TB, TB_BUILD, TB_SRC; and TB_PG when it runs under
tests/with_postgres.sh (CTest server_hostile_pg): every server's --db is then a new PostgreSQL
database of that throwaway cluster instead of an SQLite file (tests/server_dbs.py), the rows
counted there, the rest of the test the same. docs/server.md, "Hostile input and load".
"""
import atexit, copy, hashlib, json, os, select, socket, subprocess, sys, tempfile, threading, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import server_dbs

TB, BUILD, SRC = os.environ["TB"], os.environ["TB_BUILD"], os.environ["TB_SRC"]
SERVER = os.path.join(BUILD, "bin", "tilebench-server")
SHAPES = os.path.join(SRC, "results", "shapes")
MAX_BODY = 1_000_000
DEADLINE = time.time() + 50          # the whole test, whatever happens
tmp = tempfile.TemporaryDirectory(prefix="tb-hostile-")
os.chdir(tmp.name)

total = expected = 0

def note(ok, id, why=""):
    global total, expected
    total += 1
    if ok:
        expected += 1
    else:
        print(f"FAIL {id}: {why}", flush=True)

def sh(*argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=20, **kw).stdout

# --- the server -----------------------------------------------------------------------------
servers = []
atexit.register(lambda: [s.p.kill() for s in servers if s.p.poll() is None])   # whatever ends this script

def die_with_parent():   # and when this script is killed (a CTest timeout), the server gets SIGTERM
    import ctypes, signal
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG

class Server:
    def __init__(self, db, *flags):
        self.logpath = f"server{len(servers)}.log"
        self.log = open(self.logpath, "w")
        self.p = subprocess.Popen([SERVER, "--port", "0", "--db", db, "--shapes-dir", SHAPES, *flags],
                                  stdout=subprocess.PIPE, stderr=self.log, text=True, preexec_fn=die_with_parent)
        servers.append(self)
        r, _, _ = select.select([self.p.stdout], [], [], 10)
        line = self.p.stdout.readline() if r else ""
        if not line.startswith("listening on 127.0.0.1:"):
            self.p.kill()
            sys.exit(f"FAIL hostile-0: the server did not start: {line!r} {open(self.logpath).read()}")
        self.port = int(line.rsplit(":", 1)[1])

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        self.p.terminate()
        try:
            return self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None

def http(port, method, path, body=None, headers=(), raw=None, timeout=5.0, trickle=None):
    """One request on a fresh connection (Connection: close). Sends while watching for an early
    answer (as curl does: the server may answer 401 or 413 from the headers and stop reading),
    then reads to the end. Returns (status or None when closed unanswered, headers, body)."""
    if raw is None:
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        names = {h.lower() for h, _ in headers}
        for h, v in headers:
            head += f"{h}: {v}\r\n"
        if body is not None and "content-length" not in names and "transfer-encoding" not in names:
            head += f"Content-Length: {len(body)}\r\n"
        raw = head.encode("utf-8", "surrogateescape") + b"\r\n" + (body or b"")
    end = time.time() + timeout
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setblocking(False)
    got, sent = b"", 0
    try:
        while sent < len(raw) and time.time() < end:
            r, w, _ = select.select([s], [s], [], max(0.0, end - time.time()))
            if r:
                break
            if w:
                n = 1 if trickle else 65536
                try:
                    sent += s.send(raw[sent:sent + n])
                except (BrokenPipeError, ConnectionResetError):
                    break
                if trickle and sent > raw.index(b"\r\n\r\n") + 4:
                    time.sleep(trickle)
        while time.time() < end:
            r, _, _ = select.select([s], [], [], max(0.0, end - time.time()))
            if not r:
                break
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            got += b
            if b"\r\n\r\n" in got:
                h, _, rest = got.partition(b"\r\n\r\n")
                cl = [l for l in h.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if cl and len(rest) >= int(cl[0].split(b":")[1]) or method == "HEAD":
                    break
    finally:
        s.close()
    if not got.startswith(b"HTTP/1."):
        return None, {}, got
    h, _, rest = got.partition(b"\r\n\r\n")
    lines = h.decode("latin-1").split("\r\n")
    hdrs = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), hdrs, rest

# --- the fixture: a run exported as a submission, tokens, the server -------------------------
sh(os.path.join(BUILD, "tests", "make_gate_fixture"), "g.db")
sh(TB, "export", "--db", "g.db", "--run", "2", "--format", "submission", "--output", "good.json")
GOOD = json.load(open("good.json"))
# the fixture's GPU reports no SM count, so its peak is unknown and a server (without
# --allow-unknown-gpu, as this one runs) refuses it: make it an H100 SXM, 132 SMs of sm_90
GOOD["environment"].update(compute_capability="9.0", sm_count=132)
TIMED = [i for i, r in enumerate(GOOD["results"]) if r["timing"] is not None]
UNTIMED = [i for i, r in enumerate(GOOD["results"]) if r["timing"] is None]
print(f"engine: {server_dbs.ENGINE}", flush=True)
DB = server_dbs.newdb("s")
tok = {n: sh(SERVER, "token", "add", n, "--db", DB).strip() for n in ("alice", "bob", "carol")}
srv = Server(DB, "--max-body", str(MAX_BODY), "--rate", "1000000", "--idle-timeout", "2", "--body-timeout", "3")
P = srv.port
db = server_dbs.connect(DB)

def rows():
    return tuple(db.execute(q).fetchone()[0] for q in (
        "SELECT count(*) FROM submissions", "SELECT count(*) FROM tokens",
        server_dbs.SCHEMA_OBJECTS))

ROWS_START = rows()
serial = [0]
def fresh(doc=None):
    """A copy of the good document made unique (its git_sha), so that its body's SHA-256, the
    default idempotency key, is new and an accepted one is stored as a new row."""
    d = copy.deepcopy(doc or GOOD)
    serial[0] += 1
    d["tilebench"]["git_sha"] = f"hostile{serial[0]}"
    return d

def enc(d, raw=None):
    """The document as bytes; raw={"__RAW__": "1e400"} puts text JSON cannot say in place."""
    t = json.dumps(d)
    for k, v in (raw or {}).items():
        t = t.replace(json.dumps(k), v)
    return t.encode("utf-8", "surrogatepass")

AUTH = [("Authorization", "Bearer " + tok["alice"]), ("Content-Type", "application/json")]

def case(id, method, path, body=None, headers=AUTH, want=400, json_error=True, added=0, raw=None,
         port=None, check=None, timeout=5.0, trickle=None):
    """One request; it must get `want` (None: closed unanswered), an {"error": ...} body when
    json_error, and change the submissions count by `added` and nothing else."""
    before = rows()
    status, hdrs, b = http(port or P, method, path, body, headers, raw, timeout, trickle)
    after = rows()
    why = []
    if status != want:
        why.append(f"HTTP {status}, want {want}")
    if json_error and status is not None and status >= 400:
        try:
            e = json.loads(b)
            if not isinstance(e, dict) or not isinstance(e.get("error"), str) or not e["error"]:
                why.append("no error member")
        except ValueError:
            why.append("the error body is not JSON")
        if hdrs.get("content-type") != "application/json":
            why.append(f"Content-Type {hdrs.get('content-type')}")
    if after != (before[0] + added, before[1], before[2]):
        why.append(f"rows {before} -> {after}, want {added} more submission(s) and nothing else")
    if check and not why:
        extra = check(status, b)
        if extra:
            why.append(extra)
    note(not why, id, "; ".join(why) + f" [{b[:160]!r}]")
    return status, b

def post(id, body, want=400, **kw):
    return case(id, "POST", "/api/v1/submissions", body, want=want, **kw)

def batch_done(name):
    st, _, b = http(P, "GET", "/api/v1/leaderboards")
    note(srv.alive() and st == 200, f"{name}: alive", f"after the batch: alive={srv.alive()} HTTP {st}")

def reads_back(field_get, value):
    """check(): the stored document, read back through the API, holds value exactly"""
    def check(status, b):
        sid = json.loads(b)["id"]
        st, _, doc = http(P, "GET", f"/api/v1/submissions/{sid}")
        if st != 200:
            return f"GET the stored submission: HTTP {st}"
        got = field_get(json.loads(doc))
        return None if got == value else f"read back {got!r}, want {value!r}"
    return check

# --- 1. tokens -------------------------------------------------------------------------------
post("token-1.1 none", enc(fresh()), 401, headers=[])
post("token-1.2 empty bearer", enc(fresh()), 401, headers=[("Authorization", "Bearer ")])
post("token-1.3 no scheme", enc(fresh()), 401, headers=[("Authorization", tok["alice"])])
post("token-1.4 basic", enc(fresh()), 401, headers=[("Authorization", "Basic YWxpY2U6eA==")])
post("token-1.5 wrong", enc(fresh()), 401, headers=[("Authorization", "Bearer " + "0" * 48)])
post("token-1.6 one digit more", enc(fresh()), 401, headers=[("Authorization", "Bearer " + tok["alice"] + "0")])
post("token-1.7 one digit less", enc(fresh()), 401, headers=[("Authorization", "Bearer " + tok["alice"][:-1])])
post("token-1.8 sql", enc(fresh()), 401, headers=[("Authorization", "Bearer ' OR '1'='1' --")])
post("token-1.9 the stored hash", enc(fresh()), 401,
     headers=[("Authorization", "Bearer " + hashlib.sha256(tok["alice"].encode()).hexdigest())])
post("token-1.10 2 KB", enc(fresh()), 401, headers=[("Authorization", "Bearer " + "a" * 2048)])
post("token-1.11 control", enc(fresh()), 401, headers=[("Authorization", "Bearer \x01\x7f" + tok["alice"])])
post("token-1.12 two spaces", enc(fresh()), 401, headers=[("Authorization", "Bearer  " + tok["alice"])])
post("token-1.13 bob works", enc(fresh()), 201, headers=[("Authorization", "Bearer " + tok["bob"])], added=1, json_error=False)
sh(SERVER, "token", "revoke", "bob", "--db", DB)
post("token-1.14 revoked", enc(fresh()), 401, headers=[("Authorization", "Bearer " + tok["bob"])])
post("token-1.15 scheme in lower case", enc(fresh()), 201, headers=[("Authorization", "bearer " + tok["alice"])],
     added=1, json_error=False)
post("token-1.16 a 100 KB header (libmicrohttpd's own answer)", enc(fresh()), 431, json_error=False,
     headers=[("Authorization", "Bearer " + "a" * 100_000)])
batch_done("tokens")

# --- 2. broken JSON: the good document cut at many places, and other non-documents -----------
text = enc(fresh())
cuts = sorted(set(list(range(0, 40)) + list(range(40, len(text), max(1, len(text) // 60)))
                  + [text.index(b"results"), text.rindex(b"}"), len(text) - 1]))
for n in cuts:
    post(f"json-1 cut at {n}", text[:n])
for i, junk in enumerate([b" ", b"\n\n", b"null", b"true", b"0", b"-1", b'"x"', b"[]", b"{}", b"[{}]", b"{\"format\":}",
                          b"{'format': 'tilebench-submission'}", b"\xef\xbb\xbf" + text, text + b"x", text + b"{}",
                          text + b"\x00", b"\x00" + text, text + text, text.replace(b":", b"=", 1),
                          text.replace(b"}", b"", 1), text.replace(b"[", b"(", 1), b"\xff\xfe" + text]):
    post(f"json-2.{i} junk", junk)
post("json-2.w trailing white space is fine", enc(fresh()) + b" \r\n\t", 201, added=1, json_error=False)
# deep nesting: arrays, objects, and inside the free-form params
post("json-3.1 100k [", b"[" * 100_000)
post("json-3.2 100k [] closed", b"[" * 100_000 + b"]" * 100_000)
post("json-3.3 50k {", b'{"a":' * 50_000 + b"1" + b"}" * 50_000)
d = fresh()
d["results"][0]["variant"]["params"] = {"x": "__RAW__"}
post("json-3.4 params 5000 deep", enc(d, {"__RAW__": "[" * 5000 + "]" * 5000}))
d = fresh(); d["options"] = {"__RAW__": 1}
post("json-3.5 options 2000 deep", enc(d).replace(b'"__RAW__": 1', b'"x":' + b"[" * 2000 + b"]" * 2000))
# repeated members: readers differ on which copy counts
t = enc(fresh())
post("json-4.1 format twice", t.replace(b'"format": "tilebench-submission"', b'"format": "tilebench-submission", "format": "x"', 1))
post("json-4.2 results twice", t[:-1] + b', "results": []}')
post("json-4.3 gpu_name twice", t.replace(b'"gpu_name": "fixture GPU"', b'"gpu_name": "fixture GPU", "gpu_name": "<b>"', 1))
post("json-4.4 a params key twice", enc(fresh()).replace(b'"params": {}', b'"params": {"a": 1, "a": 2}', 1))
post("json-4.5 median_ms twice", t.replace(b'"median_ms": ', b'"median_ms": 1e-9, "median_ms": ', 1))
batch_done("broken JSON")

# --- 3. every field: missing, an extra member beside it, every wrong type ---------------------
def paths(v, p=()):
    """(path, value) of every member of the document (objects and leaves), results[0] and the
    first untimed result only"""
    if isinstance(v, dict):
        for k, x in v.items():
            yield p + (k,), x
            yield from paths(x, p + (k,))
    elif isinstance(v, list) and p == ("results",):
        for i in (0, UNTIMED[0]):
            yield p + (i,), v[i]
            yield from paths(v[i], p + (i,))

def get_at(d, p):
    for k in p:
        d = d[k]
    return d

def set_at(d, p, v):
    get_at(d, p[:-1])[p[-1]] = v

def name(p):
    return ".".join(str(k) for k in p)

NULLABLE = {"power_limit_w", "sm_clock_max_mhz", "energy_j_per_launch"}   # null is valid there
OPTIONAL = {"label"}
for p, v in list(paths(GOOD)):
    if isinstance(p[-1], int):
        continue
    if p[-1] not in OPTIONAL and p != ("results",):
        d = fresh(); del get_at(d, p[:-1])[p[-1]]
        post(f"field-1 {name(p)} missing", enc(d))
    if isinstance(v, dict) and p[-1] not in ("params",):
        d = fresh(); get_at(d, p)["zz_extra"] = 1
        post(f"field-2 {name(p)} with an extra member", enc(d))
    for wrong in ("x", 7, True, None, [], {"a": 1}):
        number = isinstance(v, (int, float)) and not isinstance(v, bool) or p[-1] in NULLABLE
        if type(wrong) is type(v) or (number and type(wrong) in (int, float)):
            continue
        if wrong is None and p[-1] in NULLABLE:
            continue
        d = fresh(); set_at(d, p, wrong)
        want = 400
        if wrong is None and p[-1] == "timing":
            want = 422   # a result that ran and passed without timing: a rule beyond the grammar
        if wrong is None and p[-1] == "sm_clock_mhz":
            want = 422   # a timed result without its clock cannot be checked against the peak
        post(f"field-3 {name(p)} = {json.dumps(wrong)}", enc(d), want)
batch_done("fields")

# --- 4. numbers: out of range, huge, negative, fractional, NaN, Infinity, 1e400 ----------------
NUMBERS = {   # field path: values that must be refused (400)
    ("version",): [0, 3, -1, 1.5, 1e400],   # 1 and 2 are versions (docs/submission.md)
    ("environment", "sm_count"): [-1, 10001, 1.5, 2 ** 63, 1e400],
    ("environment", "cuda_runtime_version"): [-2, 1.5, 1e10, 1e400],
    ("environment", "cublas_version"): [-2, 0.5, 1e10, -1e400],
    ("environment", "power_limit_w"): [0, -1, 1e6, 1e400],
    ("environment", "sm_clock_max_mhz"): [0, -5, 1e6, 1e400],
    ("results", 0, "shape", "m"): [0, -1, 1.5, 2 ** 20 + 1, 1e400],
    ("results", 0, "shape", "n"): [0, -4096, 4096.5, 2 ** 31, 1e400],
    ("results", 0, "shape", "k"): [0, -1, 1e-300, 2 ** 64, 1e400],
    ("results", 0, "shape", "batch"): [0, -1, 1.0001, 2 ** 21, 1e400],
    ("results", 0, "timing", "median_ms"): [0, -1, -0.0, 1e10, 1e400],
    ("results", 0, "timing", "median_lo_ms"): [0, -1, 1e400],
    ("results", 0, "timing", "median_hi_ms"): [0, -1, 1e400],
    ("results", 0, "timing", "n_samples"): [0, -1, 1.5, 1e10, 1e400],
    ("results", 0, "timing", "sm_clock_mhz"): [0, -1, 1e6, 1e400],
    ("results", 0, "timing", "energy_j_per_launch"): [0, -1, 1e10, 1e400],
}
for p, values in NUMBERS.items():
    for v in values + ["NaN", "Infinity", "-Infinity", "1e999999999999", "0x10", "+1", ".5", "01"]:
        d = fresh()
        if isinstance(v, str) or v == 1e400 or v == -1e400:
            token = v if isinstance(v, str) else ("1e400" if v > 0 else "-1e400")
            set_at(d, p, "__RAW__")
            body = enc(d, {"__RAW__": token})
        else:
            set_at(d, p, v)
            body = enc(d)
        post(f"number {name(p)} = {v}", body)
batch_done("numbers")

# --- 5. what only a server checks (422): rates above the peak, medians outside their own ------
# interval, results without validation, shapes on no leaderboard's set
def timed(d, i):
    return d["results"][TIMED[i]]

def peak(d):   # an H100 SXM: 132 SMs of sm_90
    d["environment"].update(compute_capability="9.0", sm_count=132)
    return d

for i in range(4):
    d = peak(fresh()); t = timed(d, i)["timing"]
    t.update(median_ms=1e-6, median_lo_ms=1e-6, median_hi_ms=1e-6)
    post(f"rule-1.{i} 1 ns for a big GEMM", enc(d), 422)
d = peak(fresh()); timed(d, 0)["timing"]["sm_clock_mhz"] = 1
post("rule-1.5 at a reported 1 MHz clock", enc(d), 422)
d = fresh(); d["environment"].update(compute_capability="8.0", sm_count=1)
post("rule-1.6 one SM of sm_80", enc(d), 422)
d = peak(fresh()); t = timed(d, 1)["timing"]; t["median_ms"] = t["median_lo_ms"] = t["median_hi_ms"] = t["median_ms"] / 3
post("rule-1.7 3x faster than measured, above the peak", enc(d), 422)
d = peak(fresh())
post("rule-1.8 the same GPU at its real rates: fine", enc(d), 201, added=1, json_error=False)
# an FP8 result (issue 23) is held to the FP8 peak, twice BF16's on sm_90: at 1830 MHz the
# H100's BF16 peak is 989.4 TFLOP/s, its FP8 one 1978.9
def fp8_rate(d, tflops):
    r = timed(d, 1)
    r["shape"]["dtypes"] = "e4m3,e4m3,bf16,bf16,f32"
    s = r["shape"]
    ms = 2.0 * s["m"] * s["n"] * s["k"] * s["batch"] / (tflops * 1e12) * 1e3
    r["timing"].update(median_ms=ms, median_lo_ms=ms * 0.999, median_hi_ms=ms * 1.001, sm_clock_mhz=1830)
    return d
post("rule-1.9 FP8 at 1300 TFLOP/s, above the BF16 peak, under the FP8 one: fine",
     enc(fp8_rate(peak(fresh()), 1300)), 201, added=1, json_error=False)
post("rule-1.10 FP8 at 2100 TFLOP/s, above the FP8 peak", enc(fp8_rate(peak(fresh()), 2100)), 422,
     check=lambda st, b: None if "dense FP8 peak of 1978.9 TFLOP/s" in json.loads(b)["error"] else "reason")
d = fp8_rate(peak(fresh()), 1300); timed(d, 1)["shape"]["dtypes"] = "bf16,bf16,bf16,bf16,f32"
post("rule-1.11 the same 1300 TFLOP/s as BF16: above the BF16 peak", enc(d), 422,
     check=lambda st, b: None if "dense BF16 peak of 989.4 TFLOP/s" in json.loads(b)["error"] else "reason")
for i in range(3):
    d = fresh(); t = timed(d, i)["timing"]; t["median_ms"] = t["median_hi_ms"] * 2
    post(f"rule-2.{i}a median above its interval", enc(d), 422)
    d = fresh(); t = timed(d, i)["timing"]; t["median_ms"] = t["median_lo_ms"] / 2
    post(f"rule-2.{i}b median below its interval", enc(d), 422)
    d = fresh(); t = timed(d, i)["timing"]; t["median_lo_ms"], t["median_hi_ms"] = t["median_hi_ms"], t["median_lo_ms"]
    post(f"rule-2.{i}c interval upside down", enc(d), 422)
d = fresh(); d["results"][UNTIMED[0]]["timing"] = copy.deepcopy(timed(d, 0)["timing"])
post("rule-3.1 timing on an incorrect result", enc(d), 422)
for status in ("crashed", "timeout", "unsupported", "error", "skipped"):
    d = fresh(); timed(d, 0)["status"] = status
    post(f"rule-3.2 timing on a result that {status}", enc(d), 422)
d = fresh(); timed(d, 0)["validation"]["disposition"] = "not_verified"
post("rule-3.3 timing on a result never validated", enc(d), 422)
d = fresh(); timed(d, 0)["validation"]["disposition"] = "incorrect"
post("rule-3.4 timing on an incorrect result", enc(d), 422)
d = fresh(); timed(d, 0)["timing"] = None
post("rule-3.5 a passed result without timing", enc(d), 422)
d = fresh(); del timed(d, 0)["validation"]
post("rule-3.6 no validation member at all (grammar)", enc(d), 400)
d = fresh(); timed(d, 0)["validation"] = None
post("rule-3.7 validation null (grammar)", enc(d), 400)
def names_row(i, d):   # check(): the 422 names result i by its index, variant and shape
    r = d["results"][i]
    sh = r["shape"]
    want = "results[%d] (variant %s, shape %dx%dx%d%s): the shape is on no leaderboard set" % (
        i, r["variant"]["name"], sh["m"], sh["n"], sh["k"], "" if sh["batch"] == 1 else "x%d" % sh["batch"])
    return lambda st, b: None if want in json.loads(b)["error"] else f"want {want!r}"
for what, upd in (("3x5x7", dict(m=3, n=5, k=7)), ("2^20 cubed", dict(m=2 ** 20, n=2 ** 20, k=2 ** 20)),
                  ("batch 2", dict(batch=2)), ("4096x4096x4095", dict(k=4095))):
    d = fresh()
    for r in d["results"]:
        r["shape"].update(upd)
    post(f"rule-4.1 every shape {what}: on no set", enc(d), 422, check=names_row(0, d))
for i in sorted({0, TIMED[-1], UNTIMED[0], len(GOOD["results"]) - 1}):   # one row off the sets among good ones
    for what, upd in (("k 4095", dict(k=4095)), ("batch 3", dict(batch=3)), ("m 4097", dict(m=4097))):
        d = fresh(); d["results"][i]["shape"].update(upd)
        post(f"rule-4.2 results[{i}] alone {what}: on no set", enc(d), 422, check=names_row(i, d))
d = fresh(); d["results"] = []
post("rule-4.3 no results at all", enc(d), 422)
# the peak check cannot be dodged: a GPU whose peak is unknown (no SM count, a generation the
# table lacks) is refused, and a known generation cannot claim more SMs or a higher clock than
# any GPU of it has (each raises its own ceiling)
for what, env in (("sm_count 0", dict(sm_count=0)), ("compute capability 10.0", dict(compute_capability="10.0")),
                  ("compute capability 7.5", dict(compute_capability="7.5")), ("0.0", dict(compute_capability="0.0")),
                  ("999999.999999", dict(compute_capability="999999.999999"))):
    d = fresh(); d["environment"].update(env)
    post(f"rule-5.1 {what}: no known peak", enc(d), 422,
         check=lambda st, b: None if "no known peak for GPU 'fixture GPU'" in json.loads(b)["error"] else "reason")
for n in (145, 1000, 10000):
    d = fresh(); d["environment"]["sm_count"] = n
    post(f"rule-5.2 {n} SMs of sm_90", enc(d), 422)
d = fresh(); d["environment"].update(compute_capability="8.7", sm_count=17)
post("rule-5.2 17 SMs of sm_87", enc(d), 422)
for mhz in (2101, 5000, 99999):
    d = fresh(); timed(d, 0)["timing"]["sm_clock_mhz"] = mhz
    post(f"rule-5.3 an sm_90 at {mhz} MHz", enc(d), 422)
d = fresh(); d["environment"]["sm_count"] = 144; timed(d, 0)["timing"]["sm_clock_mhz"] = 2100
post("rule-5.4 the full die at the top clock: fine", enc(d), 201, added=1, json_error=False)
batch_done("server rules")

# --- 6. strings: SQL, HTML, NUL, control characters, overlong, not UTF-8 ----------------------
SQL = "'; DROP TABLE submissions; --"
HTML = "<script>alert(1)</script>"
FREE = {   # free text: SQL and HTML are text like any other, stored and read back byte for byte
    ("tilebench", "version"): 31, ("tilebench", "git_sha"): 40, ("environment", "gpu_name"): 127,
    ("environment", "driver_version"): 31, ("results", 0, "variant", "family"): 63,
    ("results", 0, "shape", "dtypes"): 31, ("results", 0, "validation", "rule"): 63,
}
BOUND = dict(FREE)
BOUND[("results", 0, "variant", "name")] = 127   # the rest: at most 64
CHECKED = [("format",), ("run_started_at",), ("environment", "gpu_uuid_sha256"), ("environment", "compute_capability"),
           ("results", 0, "variant", "name"), ("results", 0, "variant", "sha256"), ("results", 0, "shape", "layouts"),
           ("results", 0, "status"), ("results", 0, "validation", "disposition"), ("results", 0, "timing", "method")]
for p in list(FREE) + CHECKED:
    free = p in FREE
    for what, v in (("sql", SQL), ("html", HTML)):
        d = fresh(); set_at(d, p, v)
        if free:
            if p == ("tilebench", "git_sha"):
                d["environment"]["driver_version"] = f"h{serial[0]}"   # still unique
            post(f"string-1 {name(p)} {what} (text: stored as is)", enc(d), 201, added=1, json_error=False,
                 check=reads_back(lambda x, p=p: get_at(x, p), v))
        else:
            post(f"string-1 {name(p)} {what}", enc(d))
    for what, v in (("nul", "a\u0000b"), ("nul only", "\u0000"), ("escape", "\u001b[2J"), ("newline", "a\nb"),
                    ("c1 control", "a\u0085b"), ("delete", "a\u007fb"),
                    ("overlong", "a" * 100_000), ("one past its bound", "a" * (BOUND.get(p, 64) + 1))):
        d = fresh(); set_at(d, p, v)
        post(f"string-2 {name(p)} {what}", enc(d))
    d = fresh(); set_at(d, p, "__RAW__")
    post(f"string-3 {name(p)} lone surrogate", enc(d, {"__RAW__": '"\\ud800"'}))
    post(f"string-3 {name(p)} not UTF-8", enc(d, {"__RAW__": '"a@@b"'}).replace(b"@@", b"\xff\xfe"))
    post(f"string-3 {name(p)} overlong UTF-8", enc(d, {"__RAW__": '"a@@b"'}).replace(b"@@", b"\xc0\xaf"))
    post(f"string-3 {name(p)} a surrogate in UTF-8", enc(d, {"__RAW__": '"a@@b"'}).replace(b"@@", b"\xed\xa0\x80"))
    post(f"string-3 {name(p)} raw tab byte", enc(d, {"__RAW__": '"a\tb"'}))
for what, ns in (("empty namespace", ":x"), ("html namespace", "<b>:x"), ("long namespace", "n" * 16 + ":x"),
                 ("two colons", "a:b:c"), ("empty after the colon", "ns:"), ("128 characters", "v" * 128),
                 ("space", "a b"), ("slash", "../../etc/passwd")):
    d = fresh(); timed(d, 0)["variant"]["name"] = ns
    post(f"string-4 variant name: {what}", enc(d))
for what, v in (("9..0", "9..0"), (".9", ".9"), ("9.", "9."), ("9", "9"), ("a.b", "a.b")):
    d = fresh(); d["environment"]["compute_capability"] = v
    post(f"string-5 compute capability {what}", enc(d))
for v in ("2026-11-25 00:00:00Z", "2026-11-25T00:00:00+0", "'; DROP TABLE s;--zzz", "2026-11-25T00:00:00z"):
    d = fresh(); d["run_started_at"] = v
    post(f"string-6 run_started_at {v!r}", enc(d))
d = fresh(); d["options"] = {"method": HTML, "stop": SQL}
post("string-7 options sql, html: stored", enc(d), 201, added=1, json_error=False,
     check=reads_back(lambda x: x["options"], {"method": HTML, "stop": SQL}))
d = fresh(); d["options"] = {"<script>": 1}
post("string-7 options: a key the schema does not name", enc(d))
d = fresh(); d["options"] = {"method": 1}
post("string-7 options: a number for a string", enc(d))
d = fresh(); d["options"] = {"trials": "1"}
post("string-7 options: a string for a number", enc(d))
d = fresh(); timed(d, 0)["variant"]["params"] = {HTML: SQL, "k": [1, {"x": None}]}
post("string-8 params sql, html: stored", enc(d), 201, added=1, json_error=False,
     check=reads_back(lambda x: x["results"][TIMED[0]]["variant"]["params"], {HTML: SQL, "k": [1, {"x": None}]}))
d = fresh(); timed(d, 0)["variant"]["params"] = {"a\u0000b": 1}
post("string-8 params: NUL in a key", enc(d))
d = fresh(); timed(d, 0)["variant"]["params"] = {"x": "\u0000"}
post("string-8 params: NUL in a value", enc(d))
d = fresh(); d["environment"]["gpu_name"] = HTML
post("string-9 an HTML GPU name", enc(d), 201, added=1, json_error=False)
st, hd, b = http(P, "GET", "/api/v1/leaderboards")
note(st == 200 and hd.get("content-type") == "application/json" and
     any(e["gpu"] == HTML for e in json.loads(b)), "string-9b listed as JSON", b[:200])
st, hd, b = http(P, "GET", "/leaderboards/square/" + HTML.replace("<", "%3C").replace(">", "%3E"))
note(st in (200, 404) and b"<script>alert" not in b, "string-9c its HTML page escapes it", f"HTTP {st} {b[:200]!r}")
note(rows()[2] == ROWS_START[2] and rows()[1] == ROWS_START[1], "string-10 every table still there", f"{rows()}")
batch_done("strings")

# --- 7. bodies: too big (413, answered from the headers), chunked, slow ----------------------
post("body-1.1 10 MB", b"x" * 10_000_000, 413, timeout=15)
post("body-1.2 10 MB, no token (401 first)", b"x" * 10_000_000, 401, headers=[], timeout=15)
post("body-1.3 a Content-Length of 10 MB and no body", None, 413,
     headers=AUTH + [("Content-Length", "10000000")])
post("body-1.4 one byte over the limit", b" " * (MAX_BODY + 1), 413)
post("body-1.5 at the limit, not a document", b" " * MAX_BODY, 400)
chunk = b"x" * 65536
chunked = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(MAX_BODY // len(chunk) + 2)) + b"0\r\n\r\n"
post("body-2.1 2 MB chunked, no length given", chunked, 413, headers=AUTH + [("Transfer-Encoding", "chunked")])
good = enc(fresh())
post("body-2.2 a document chunked", b"%x\r\n%s\r\n0\r\n\r\n" % (len(good), good), 201, added=1, json_error=False,
     headers=AUTH + [("Transfer-Encoding", "chunked")])
post("body-2.3 Content-Length twice", good, 400, headers=AUTH + [("Content-Length", str(len(good))), ("Content-Length", "5")])
post("body-2.4 Content-Length and chunked", good, 400,
     headers=AUTH + [("Content-Length", str(len(good))), ("Transfer-Encoding", "chunked")])
post("body-2.5 a Content-Length of 10^26 (libmicrohttpd's own answer)", b"x", 413, json_error=False,
     headers=AUTH + [("Content-Length", "1" + "0" * 26)])
post("body-2.6 Expect: 100-continue and too big", None, 413,
     headers=AUTH + [("Content-Length", "10000000"), ("Expect", "100-continue")])
# slow bodies: run beside the rest; a trickled body is cut at --body-timeout (3 s), a stalled
# one at --idle-timeout (2 s); the connection closes unanswered, nothing is written, and the
# server answers others meanwhile
slow = []
slow_shas = []
def slow_one(id, **kw):
    t0 = time.time()
    d = fresh()
    slow_shas.append(d["tilebench"]["git_sha"])
    r = http(P, "POST", "/api/v1/submissions", enc(d), AUTH, timeout=12, **kw)
    slow.append((id, r[0], time.time() - t0))
threads = [threading.Thread(target=slow_one, args=("body-3.1 one byte every 0.3 s",), kwargs=dict(trickle=0.3)),
           threading.Thread(target=slow_one, args=("body-3.2 half a body, then silence",),
                            kwargs=dict(raw=b"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                        tok["alice"].encode() + b"\r\nContent-Length: 1000\r\n\r\n{\"format\"")),
           threading.Thread(target=slow_one, args=("body-3.3 half the headers, then silence",),
                            kwargs=dict(raw=b"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nAuthoriz"))]
for _ in range(20):   # and twenty more stalled ones at once
    threads.append(threading.Thread(target=slow_one, args=("body-3.4 stalled",),
                                    kwargs=dict(raw=b"POST /api/v1/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                                                tok["alice"].encode() + b"\r\nContent-Length: 9\r\n\r\n")))
for t in threads:
    t.daemon = True
    t.start()
time.sleep(0.3)
t0 = time.time()
st, _, _ = http(P, "GET", "/api/v1/leaderboards", timeout=2)
note(st == 200 and time.time() - t0 < 1, "body-3.5 others answered beside 23 slow connections", f"HTTP {st} in {time.time() - t0:.2f} s")
batch_done("bodies")

# --- 8. idempotency keys ---------------------------------------------------------------------
doc = enc(fresh())
K = [("Idempotency-Key", "hostile-key-1")]
st, b = post("idem-1.1 first", doc, 201, added=1, json_error=False, headers=AUTH + K)
first = json.loads(b).get("id") if st == 201 else None
same_id = lambda st, b: None if json.loads(b) == {"id": first, "replayed": True} else f"{b!r}, want id {first} replayed"
post("idem-1.2 replayed", doc, 200, json_error=False, headers=AUTH + K, check=same_id)
post("idem-1.3 replayed again", doc, 200, json_error=False, headers=AUTH + K, check=same_id)
post("idem-1.4 the same key, another document", enc(fresh()), 422, headers=AUTH + K)
post("idem-1.5 the same key, the same document with a space more", doc + b" ", 422, headers=AUTH + K)
post("idem-1.6 the same key, a broken document (checked first)", doc[:-1], 400, headers=AUTH + K)
post("idem-1.7 the same key and document, another token: its own", doc, 201, added=1, json_error=False,
     headers=[("Authorization", "Bearer " + tok["carol"]), *K])
nokey = enc(fresh())
st, b = post("idem-2.1 no key: the body's SHA-256", nokey, 201, added=1, json_error=False)
first = json.loads(b).get("id") if st == 201 else None
post("idem-2.2 no key, replayed", nokey, 200, json_error=False, check=same_id)
for what, k in (("empty", ""), ("129 characters", "k" * 129), ("a space", "a b"), ("a quote", 'a"b'),
                ("control", "a\x01b"), ("not ASCII", "clé"), ("sql", "'; DROP TABLE submissions;--")):
    post(f"idem-3 a key {what}", enc(fresh()), 400, headers=AUTH + [("Idempotency-Key", k)])
# a race: eight requests with one key at once store it once; 64 distinct ones get 64 ids, each
# its own (the store's last insert id is its connection's: interleaved inserts swapped ids)
race, lock = [], threading.Lock()
def send(body, hdrs):
    r = http(P, "POST", "/api/v1/submissions", body, hdrs, timeout=10)
    with lock:
        race.append(r + (body,))
before = rows()
doc = enc(fresh())
ts = [threading.Thread(target=send, args=(doc, AUTH + [("Idempotency-Key", "race-1")])) for _ in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
codes = sorted(r[0] for r in race)
ids = {json.loads(r[2])["id"] for r in race if r[0] in (200, 201)}
note(codes == [200] * 7 + [201] and len(ids) == 1 and rows()[0] == before[0] + 1, "idem-4.1 one key at once",
     f"{codes} ids {ids}")
race.clear()
docs = [fresh() for _ in range(64)]
before = rows()
ts = [threading.Thread(target=send, args=(enc(x), AUTH)) for x in docs]
[t.start() for t in ts]; [t.join() for t in ts]
ids, right = set(), 0
for st, _, b, sent in race:   # the id each was answered names the very document it sent
    if st == 201:
        ids.add(json.loads(b)["id"])
        st, _, doc = http(P, "GET", f"/api/v1/submissions/{json.loads(b)['id']}")
        right += st == 200 and json.loads(doc)["tilebench"]["git_sha"] == json.loads(sent)["tilebench"]["git_sha"]
note(len(ids) == 64 and right == 64 and rows()[0] == before[0] + 64, "idem-4.2 64 documents at once: 64 ids, each its own",
     f"{len(ids)} distinct ids, {right} of 64 name the document sent")
# the cached boards under concurrent submissions: read (and cached) first, then 16 submissions
# beside 32 reads of the JSON and HTML boards; afterwards both hold every stored submission
BOARD = "/api/v1/leaderboards/square/fixture%20GPU"
def board_sizes():
    st1, _, j = http(P, "GET", BOARD)
    st2, _, h = http(P, "GET", "/leaderboards/square/fixture%20GPU")
    n = db.execute("SELECT count(*) FROM submissions WHERE gpu_name = 'fixture GPU'").fetchone()[0]
    return (st1, st2), len(json.loads(j)) if st1 == 200 else None, h.count(b'<tr class="entry">'), n
board_sizes()
race.clear()
ts = [threading.Thread(target=send, args=(enc(fresh()), AUTH)) for _ in range(16)]
ts += [threading.Thread(target=lambda p=p: http(P, "GET", p)) for _ in range(16)
       for p in (BOARD, "/leaderboards/square/fixture%20GPU")]
[t.start() for t in ts]; [t.join() for t in ts]
sts, nj, nh, n = board_sizes()
note(sts == (200, 200) and nj == nh == n and sorted(r[0] for r in race) == [201] * 16, "cache-1.1 the boards after concurrent submissions",
     f"HTTP {sts}, {nj} JSON entries, {nh} HTML entries, {n} stored")
batch_done("idempotency")

# --- 9. paths and ids ------------------------------------------------------------------------
def get(id, path, want, json_error=True, **kw):
    case(id, "GET", path, headers=[], want=want, json_error=json_error, **kw)

for i, junk in enumerate(["../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "%2e%2e/%2e%2e/etc/passwd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                          "-1", "+1", "0x1", "1e3", "1.0", "%201", "1%20", "%31%00", "1%00", "1%00.json", "1;DROP%20TABLE%20submissions",
                          "1'%20OR%20'1'='1", "99999999999999999999", "9" * 100, "%FF", "%C0%AE%C0%AE", "1/2", "%3F", "%3Cscript%3E",
                          "\u00e9".encode().decode("latin-1"), "..", "."]):
    get(f"path-1.{i} /api/v1/submissions/{junk}", "/api/v1/submissions/" + junk, 400)
get("path-2.1 id 0", "/api/v1/submissions/0", 404)
get("path-2.2 id 2^63-1", "/api/v1/submissions/922337203685477580", 404)
get("path-2.3 no id", "/api/v1/submissions/", 400)
get("path-2.4 a set ..", "/api/v1/leaderboards/../square/fixture%20GPU", 404)
get("path-2.5 a set with SQL", "/api/v1/leaderboards/'%3BDROP%20TABLE%20submissions--/x", 404)
get("path-2.6 a GPU model that is traversal: just a name", "/api/v1/leaderboards/square/..%2F..%2Fetc%2Fpasswd", 200,
    check=lambda st, b: None if json.loads(b) == [] else f"{b[:100]!r}")
get("path-2.7 a GPU model of 10 KB", "/api/v1/leaderboards/square/" + "g" * 10_000, 200,
    check=lambda st, b: None if json.loads(b) == [] else f"{b[:100]!r}")
get("path-2.8 a URL of 100 KB (libmicrohttpd's own answer)", "/api/v1/" + "a" * 100_000, 414, json_error=False)
get("path-2.9 absolute form", "http://evil.example/api/v1/submissions/1", 404)
get("path-2.10 asterisk", "*", 404)
case("path-3.1 POST to another path", "POST", "/api/v1/submissions/1", enc(fresh()), want=404)
case("path-3.2 POST with a trailing slash", "POST", "/api/v1/submissions/", enc(fresh()), want=404)
case("path-3.3 POST through ..", "POST", "/api/v1/x/../submissions", enc(fresh()), want=404)
case("path-3.4 POST %2e%2e", "POST", "/api/v1/x/%2e%2e/submissions", enc(fresh()), want=404)
case("path-3.5 POST upper case", "POST", "/API/V1/SUBMISSIONS", enc(fresh()), want=404)
batch_done("paths")

# --- 10. methods -----------------------------------------------------------------------------
for m in ("PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND", "FOO", "post", "Get"):
    for path in ("/api/v1/submissions", "/api/v1/submissions/1", "/api/v1/leaderboards"):
        body = enc(fresh()) if m in ("PUT", "PATCH", "post") else None
        case(f"method-1 {m} {path}", m, path, body, want=405)
case("method-2 HEAD", "HEAD", "/api/v1/leaderboards", headers=[], want=200, json_error=False)
batch_done("methods")

# --- 11. the protocol itself: libmicrohttpd's own answers, or a closed connection -------------
for i, (raw, want) in enumerate([(b"HELLO\r\n\r\n", None), (b"\r\n\r\n\r\n", None), (b"GET\r\n\r\n", None),
                                 (b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505), (b"GET / HTTP/1.1\r\n\r\n", 400),
                                 (b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400),
                                 (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40, None)]):
    case(f"proto-1.{i} {raw[:20]!r}", "GET", "/", raw=raw, headers=[], want=want, json_error=False, timeout=4)
batch_done("protocol")

# --- 12. the rate: a second server with --rate 3 on its own file -----------------------------
DB2 = server_dbs.newdb("r")
tok2 = {n: sh(SERVER, "token", "add", n, "--db", DB2).strip() for n in ("dave", "erin")}
srv2 = Server(DB2, "--rate", "3")
db2 = server_dbs.connect(DB2)
for i in range(6):   # refused documents count too: the parser's time is what the rate guards
    case(f"rate-1.{i} dave", "POST", "/api/v1/submissions", b"{}", port=srv2.port, want=400 if i < 3 else 429,
         headers=[("Authorization", "Bearer " + tok2["dave"])])
case("rate-1.6 erin has her own", "POST", "/api/v1/submissions", b"{}", port=srv2.port, want=400,
     headers=[("Authorization", "Bearer " + tok2["erin"])])
case("rate-1.7 no token: 401 before the rate", "POST", "/api/v1/submissions", b"{}", port=srv2.port, want=401, headers=[])
st, _, b = http(srv2.port, "POST", "/api/v1/submissions", enc(fresh()), [("Authorization", "Bearer " + tok2["dave"])])
note(st == 429 and db2.execute("SELECT count(*) FROM submissions").fetchone()[0] == 0, "rate-1.8 a good document beyond the rate",
     f"HTTP {st}")
note(srv2.stop() == 0, "rate-1.9 SIGTERM stops it", "")

# --- 13. --allow-unknown-gpu: a GPU whose peak is unknown is taken unchecked; the bounds of a --
# known generation still hold
DB3 = server_dbs.newdb("u")
tok3 = sh(SERVER, "token", "add", "frank", "--db", DB3).strip()
srv3 = Server(DB3, "--rate", "0", "--allow-unknown-gpu")
db3 = server_dbs.connect(DB3)
A3 = [("Authorization", "Bearer " + tok3)]
for what, env, want in (("sm_count 0", dict(sm_count=0), 201), ("compute capability 10.0", dict(compute_capability="10.0"), 201),
                        ("200 SMs of sm_90", dict(sm_count=200), 422)):
    d = fresh(); d["environment"].update(env)
    n0 = db3.execute("SELECT count(*) FROM submissions").fetchone()[0]
    st, _, b = http(srv3.port, "POST", "/api/v1/submissions", enc(d), A3)
    n1 = db3.execute("SELECT count(*) FROM submissions").fetchone()[0]
    note(st == want and n1 == n0 + (want == 201), f"unknown-1 {what} with --allow-unknown-gpu", f"HTTP {st}, want {want} [{b[:160]!r}]")
d = fresh(); d["environment"]["sm_count"] = 0; timed(d, 0)["timing"]["sm_clock_mhz"] = None
st, _, b = http(srv3.port, "POST", "/api/v1/submissions", enc(d), A3)
note(st == 422, "unknown-2 a timed result without its clock, still", f"HTTP {st} {b[:160]!r}")
d = fresh(); d["environment"]["sm_count"] = 0; timed(d, 0)["timing"]["sm_clock_mhz"] = 5000
st, _, b = http(srv3.port, "POST", "/api/v1/submissions", enc(d), A3)
note(st == 422 and b"above what any GPU of compute capability 9.0 runs at" in b, "unknown-3 an sm_90 at 5000 MHz, still",
     f"HTTP {st} {b[:160]!r}")
note(srv3.stop() == 0, "unknown-4 SIGTERM stops it", "")

# --- the slow ones, then a good submission, then SIGTERM --------------------------------------
for t in threads:
    t.join(max(0.1, DEADLINE - time.time()))
for id, status, took in sorted(slow)[:4] + ([s for s in slow if s[0].startswith("body-3.4")][:1]):
    note(status is None and took < 10, id, f"HTTP {status} after {took:.1f} s (want closed, unanswered, in < 10 s)")
note(len(slow) == len(threads) and all(s[1] is None for s in slow), "body-3.6 every slow connection closed",
     f"{len(slow)} of {len(threads)} ended: {sorted(set(s[1] for s in slow), key=str)}")
stored = [x for x in slow_shas if db.execute("SELECT count(*) FROM submissions WHERE " + server_dbs.CONTAINS,
                                               (f'"git_sha": "{x}"',)).fetchone()[0]]
note(not stored, "body-3.7 nothing of a slow body was stored", f"{stored}")
post("final-1 a good submission afterwards", enc(fresh()), 201, added=1, json_error=False)
note(srv.alive(), "final-2 the server is up", "")
rc = srv.stop()
note(rc == 0 and "stopped" in open(srv.logpath).read(), "final-3 SIGTERM stops it cleanly", f"exit {rc}")
print(f"hostile: {total} requests, {expected} as expected")
sys.exit(0 if total == expected and total >= 300 else 1)
