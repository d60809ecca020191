#!/usr/bin/env python3
"""auto_table_cli.py - scripts/wgmma-auto-table.py (wgmma_auto's dispatch table from sweeps)
on small databases made here: the fastest of the table's points wins a shape, points not in
the table and failed measurements never count, --merge keeps the current table's rows for
shapes the databases do not measure (and adds their tuning time) and lets --points append a
point (the old rows keep their indices), bad input is exit 2
with nothing written, and a WAL database is read without leaving -wal or -shm behind. CTest auto_table_cli (label cli); no GPU, no tilebench binary."""
import json, os, sqlite3, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "wgmma-auto-table.py")
fails = 0


def check(cid, cond, what=""):
    global fails
    print(("ok   " if cond else "FAIL ") + cid + ("" if cond else f": {what}"))
    fails += 0 if cond else 1


def make_db(path, rows, total_s):
    """rows: (variant name, m, n, k, median_ms, status, disposition), layout tn."""
    c = sqlite3.connect(path)
    c.executescript("""
        CREATE TABLE variants (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE problems (id INTEGER PRIMARY KEY, m INT, n INT, k INT, layouts TEXT);
        CREATE TABLE measurements (variant_id INT, problem_id INT, median_ms REAL, status TEXT,
                                   disposition TEXT);
        CREATE TABLE environment (gpu_name TEXT);
        CREATE TABLE runs (phases_json TEXT, command_line TEXT);""")
    c.execute("INSERT INTO environment VALUES ('NVIDIA H100 80GB HBM3')")
    c.execute("INSERT INTO runs VALUES (?, ?)", (json.dumps({"total_s": total_s}),
                                                 f"tilebench sweep --db {path} --shapes x"))
    for name, m, n, k, med, st, disp in rows:
        vid = c.execute("SELECT id FROM variants WHERE name = ?", (name,)).fetchone()
        vid = vid[0] if vid else c.execute("INSERT INTO variants (name) VALUES (?)", (name,)).lastrowid
        pid = c.execute("SELECT id FROM problems WHERE m = ? AND n = ? AND k = ?", (m, n, k)).fetchone()
        pid = pid[0] if pid else c.execute("INSERT INTO problems (m, n, k, layouts) VALUES (?, ?, ?, 'tn')",
                                           (m, n, k)).lastrowid
        c.execute("INSERT INTO measurements VALUES (?, ?, ?, ?, ?)", (vid, pid, med, st, disp))
    c.commit()
    c.close()


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as d:
    table = os.path.join(d, "table.json")
    points = ["128 256 4 1 1 cooperative m 16", "128 128 6 1 1 pingpong h 1"]
    json.dump({"gpu": "NVIDIA H100 80GB HBM3", "sweep": ["old sweep"], "tuning_seconds": 100.0,
               "skinny_max_m": 16, "pitch_align": 8, "points": points,
               "shapes": [[512, 512, 512, 1], [4096, 4096, 4096, 0], [8192, 8192, 8192, 0]]},
              open(table, "w"))
    p0 = "wgmma_bf16_128x256x64_c1x1_s4_cooperative_rasterm_sw16_tn"
    p1 = "wgmma_bf16_128x128x64_c1x1_s6_pingpong_rasterh_sw1_tn"
    db = os.path.join(d, "a.db")
    make_db(db, [(p0, 4096, 4096, 4096, 0.20, "ok", "passed"), (p1, 4096, 4096, 4096, 0.18, "ok", "passed"),
                 (p0, 16384, 6144, 4096, 1.00, "ok", "passed"), (p1, 16384, 6144, 4096, 0.90, "ok", "incorrect"),
                 ("wgmma_bf16_64x64x64_c1x1_s4_pingpong_rasterm_sw8_tn", 16384, 6144, 4096, 0.5, "ok", "passed"),
                 ("cublaslt", 16384, 6144, 4096, 0.4, "ok", "passed")], 50.0)
    # 1: no --merge: only the measured shapes, the fastest passed table point each
    rc, out, err = run(db, "--table", table)
    t = json.loads(out) if rc == 0 else {}
    check("table-1.1", rc == 0, f"exit {rc}: {err}")
    check("table-1.2", t.get("shapes") == [[4096, 4096, 4096, 1], [16384, 6144, 4096, 0]],
          f"shapes {t.get('shapes')}")
    check("table-1.3", t.get("tuning_seconds") == 50.0 and t.get("points") == points,
          f"{t.get('tuning_seconds')} {t.get('points')}")
    check("table-1.4", all("/" not in w for c in t.get("sweep", []) for w in c.split()), "a path in sweep")
    # 2: --merge: the old rows of unmeasured shapes kept, measured ones replaced, time added
    rc, out, err = run(db, "--table", table, "--merge")
    t = json.loads(out) if rc == 0 else {}
    check("table-2.1", rc == 0, f"exit {rc}: {err}")
    check("table-2.2", t.get("shapes") == [[512, 512, 512, 1], [4096, 4096, 4096, 1], [8192, 8192, 8192, 0],
                                           [16384, 6144, 4096, 0]], f"shapes {t.get('shapes')}")
    check("table-2.3", t.get("tuning_seconds") == 150.0 and t.get("sweep", [""])[0] == "old sweep",
          f"{t.get('tuning_seconds')} {t.get('sweep')}")
    # 3: --output writes the file whole; the table may be the output itself
    rc, out, err = run(db, "--table", table, "--merge", "--output", table)
    t = json.load(open(table)) if rc == 0 else {}
    check("table-3.1", rc == 0 and out == "" and len(t.get("shapes", [])) == 4, f"exit {rc}: {err}")
    # 3b: --merge --points appending a point: the old rows keep their indices, the new point
    # wins the shape it is fastest on (4096^3), and the unmeasured rows stay
    p2 = "wgmma_bf16_128x128x64_c1x1_s4_cooperative_rasterm_sw16_tn"
    db3 = os.path.join(d, "c.db")
    make_db(db3, [(p0, 4096, 4096, 4096, 0.20, "ok", "passed"), (p2, 4096, 4096, 4096, 0.15, "ok", "passed")], 5.0)
    more = os.path.join(d, "more.txt")
    open(more, "w").write("\n".join(points + ["128 128 4 1 1 cooperative m 16"]) + "\n")
    rc, out, err = run(db3, "--table", table, "--merge", "--points", more)
    t = json.loads(out) if rc == 0 else {}
    check("table-3.2", rc == 0 and t.get("points") == points + ["128 128 4 1 1 cooperative m 16"]
          and t.get("shapes") == [[512, 512, 512, 1], [4096, 4096, 4096, 2], [8192, 8192, 8192, 0],
                                  [16384, 6144, 4096, 0]], f"exit {rc}: {err} {t.get('shapes')}")
    # 4: bad input: exit 2, one line, nothing written
    before = open(table).read()
    pts = os.path.join(d, "points.txt")
    open(pts, "w").write("128 256 4 1 1 cooperative m 16\n")
    for cid, args, want in (("table-4.1", (os.path.join(d, "none.db"), "--table", table, "--output", table),
                             "no database"),
                            ("table-4.2", (db, "--table", table, "--merge", "--points", pts, "--output", table),
                             "--merge keeps")):
        rc, out, err = run(*args)
        check(cid, rc == 2 and want in err and len(err.strip().splitlines()) == 1
              and open(table).read() == before, f"exit {rc}: {err!r}")
    # 5: a WAL-mode database (as tilebench writes them) is read without leaving a -wal or -shm
    # beside it (a mode=ro connection would: a device call brings back at most 8 files)
    wal = os.path.join(d, "wal.db")
    make_db(wal, [(p0, 4096, 4096, 4096, 0.20, "ok", "passed")], 10.0)
    c = sqlite3.connect(wal)
    c.execute("PRAGMA journal_mode = WAL")
    c.close()
    rc, out, err = run(wal, "--table", table)
    left = sorted(f for f in os.listdir(d) if f.startswith("wal.db-"))
    check("table-5.1", rc == 0 and not left, f"exit {rc}: {err!r}, left {left}")
sys.exit(1 if fails else 0)
