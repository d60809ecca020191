#!/usr/bin/env python3
"""harness-cost.py - how long a measurement takes and whether it comes back the same (issue 28),
for docs/perf.md, in one device call: tilebench beside triton's do_bench and
torch.utils.benchmark timing cuBLAS BF16 GEMMs, each run as N separate processes.

  /opt/torch/.venv/bin/python scripts/harness-cost.py PREFIX [--runs 5] [--shapes 1024,4096,8192]
                                                              [--peers] [--out DIR]

PREFIX is an install prefix (scripts/make-prefix.sh). For each square size S:
  - tilebench: N separate `tilebench sweep --variants cublaslt.so --shapes SxSxS --no-energy`
    processes (default stop rule), each into its own database; per run the wall time of the
    process, the median, the median SM clock of its samples, the stop reason and, from the
    run's stored phases, where its time went;
  - with --peers (torch and triton importable): N separate processes of do_bench (rep 100 ms and
    1000 ms) and of torch.utils.benchmark.Timer.blocked_autorange on torch.matmul, the same
    BF16 shape, each its wall time and its figure.
Prints a Markdown table: wall per measurement (min-max), the spread of the N figures
(max/min - 1), the clocks where tilebench has them, and, for tilebench, the spread of
median x clock (the kernel's cycles) to tell the card's pace from the kernel's. Writes the raw
rows as JSON to OUT/harness-cost.json. Never changes the GPU's clocks or power settings.
"""
import argparse, json, os, sqlite3, statistics, subprocess, sys, tempfile, time

PEER = r'''
import sys, time, json
t0 = time.perf_counter()
import torch
n, how = int(sys.argv[1]), sys.argv[2]
a = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
b = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
f = lambda: torch.matmul(a, b)
if how.startswith("do_bench"):
    from triton.testing import do_bench
    ms = do_bench(f, rep=int(how.split(":")[1]))
else:
    import torch.utils.benchmark as tb
    ms = tb.Timer("f()", globals={"f": f}).blocked_autorange(min_run_time=0.2).median * 1e3
print(json.dumps({"ms": ms, "wall_s": time.perf_counter() - t0}))
'''


def tilebench_run(prefix, s, tmp, i, energy=False):
    db = os.path.join(tmp, "tb-%d-%d-%d.db" % (s, i, energy))
    cmd = [os.path.join(prefix, "bin", "tilebench"), "sweep", "--variants",
           os.path.join(prefix, "lib", "tilebench", "variants", "cublaslt.so"),
           "--shapes", "%dx%dx%d" % (s, s, s), "--no-progress", "--quiet", "--db", db]
    if not energy:
        cmd.append("--no-energy")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return {"tool": "tilebench", "size": s, "error": p.stderr.strip()[-300:]}
    c = sqlite3.connect(db)
    mid, med, stop = c.execute("SELECT id, median_ms, stop_reason FROM measurements").fetchone()
    clocks = [r[0] for r in c.execute("SELECT clock_mhz FROM samples WHERE measurement_id = ? "
                                      "AND clock_mhz > 0", (mid,))]
    phases = c.execute("SELECT phases_json FROM runs").fetchone()[0]
    return {"tool": "tilebench" + (", energy on" if energy else ""), "size": s, "wall_s": wall, "ms": med,
            "clock_mhz": statistics.median(clocks) if clocks else None,
            "stop": stop or "",
            "phases": json.loads(phases) if phases else None}


def peer_run(s, how):
    p = subprocess.run([sys.executable, "-c", PEER, str(s), how], capture_output=True, text=True)
    if p.returncode != 0:
        return {"tool": how, "size": s, "error": p.stderr.strip()[-300:]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return {"tool": how, "size": s, "wall_s": r["wall_s"], "ms": r["ms"]}


def spread(v):
    v = [x for x in v if x]
    return (max(v) / min(v) - 1) * 100 if len(v) > 1 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("prefix")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--shapes", default="1024,4096,8192")
    ap.add_argument("--peers", action="store_true")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    a = ap.parse_args()
    sizes = [int(x) for x in a.shapes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in sizes:
            for i in range(a.runs):
                rows.append(tilebench_run(a.prefix, s, tmp, i))
                print(json.dumps(rows[-1]), flush=True)
            for i in range(a.runs):
                rows.append(tilebench_run(a.prefix, s, tmp, i, energy=True))
                print(json.dumps(rows[-1]), flush=True)
            if a.peers:
                for how in ("do_bench:100", "do_bench:1000", "torch.utils.benchmark"):
                    for i in range(a.runs):
                        rows.append(peer_run(s, how))
                        print(json.dumps(rows[-1]), flush=True)
        # several variants in one sweep: wall per measurement without and with energy
        multi = []
        for energy in (False, True):
            db = os.path.join(tmp, "multi-%d.db" % energy)
            cmd = [os.path.join(a.prefix, "bin", "tilebench"), "sweep", "--shapes", "4096x4096x4096",
                   "--filter", "cublaslt*", "--filter", "wgmma*", "--no-progress", "--quiet", "--db", db]
            if not energy:
                cmd.append("--no-energy")
            t0 = time.perf_counter()
            p = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            n = sqlite3.connect(db).execute("SELECT count(*) FROM measurements").fetchone()[0] if p.returncode == 0 else 0
            multi.append((energy, n, wall, p.returncode))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "harness-cost.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n| tool | shape | runs | wall per measurement | spread of the %d figures | SM clock (median of samples) | spread of median x clock |" % a.runs)
    print("|---|---|---|---|---|---|---|")
    tools = []
    for r in rows:
        if r["tool"] not in tools:
            tools.append(r["tool"])
    for t in tools:
        for s in sizes:
            g = [r for r in rows if r["tool"] == t and r["size"] == s and "error" not in r]
            bad = [r for r in rows if r["tool"] == t and r["size"] == s and "error" in r]
            if not g:
                if bad:
                    print("| %s | %d³ | 0 | failed: %s | | | |" % (t, s, bad[0]["error"][:80]))
                continue
            w = [r["wall_s"] for r in g]
            ms = [r["ms"] for r in g]
            clk = [r.get("clock_mhz") for r in g if r.get("clock_mhz")]
            cyc = [r["ms"] * r["clock_mhz"] for r in g if r.get("clock_mhz")]
            print("| %s | %d³ | %d | %.2f–%.2f s | %.2f %% (%.4f–%.4f ms) | %s | %s |" % (
                t, s, len(g), min(w), max(w), spread(ms), min(ms), max(ms),
                "%.0f–%.0f MHz" % (min(clk), max(clk)) if clk else "—",
                "%.2f %%" % spread(cyc) if cyc else "—"))


    for energy, n, wall, rc in multi:
        print("\ntilebench, %d variants x 4096³ in one sweep%s: %.1f s, %.2f s a measurement (exit %d)"
              % (n, ", energy on" if energy else "", wall, wall / n if n else float("nan"), rc))


if __name__ == "__main__":
    main()
