#!/usr/bin/env python3
"""energy-probe.py - how NVML's total-energy counter behaves on this card (issue 28), so the
energy-per-launch measurement is as short as the counter allows and its uncertainty is stated
from figures, not guesses. On the GPU machine, one device call (~15 s):

  python3 scripts/energy-probe.py PREFIX [--shape 8192x8192x8192] [--load 6] [--out DIR]

Polls nvmlDeviceGetTotalEnergyConsumption as fast as it answers, first with the card idle
(2 s), then while `tilebench sweep` runs back-to-back cublaslt launches in another process
(LOAD s), recording every change of the counter with its host time. Prints: the cost of one
read; the counter's update period (intervals between changes: median, min, max); the power
between consecutive changes; and, from the same trace, how far a power figure read over a
window of W ms strays from the trace's steady power, for windows read at arbitrary times
(what the worker did: two reads, W apart) and for windows from one change to a later one
(edge-aligned). Writes the raw trace as JSON. Never changes any setting of the card.
"""
import argparse, ctypes, json, os, random, statistics, subprocess, sys, time

def nvml():
    lib = ctypes.CDLL("libnvidia-ml.so.1")
    assert lib.nvmlInit_v2() == 0, "nvmlInit failed"
    h = ctypes.c_void_p()
    assert lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
    e = ctypes.c_ulonglong()
    f = lib.nvmlDeviceGetTotalEnergyConsumption
    def read():
        assert f(h, ctypes.byref(e)) == 0
        return e.value
    return read

def trace(read, secs):
    """(host time s, counter mJ) at every change, plus the number of reads."""
    out, t_end, last, n = [], time.perf_counter() + secs, None, 0
    while True:
        t = time.perf_counter()
        if t >= t_end: break
        v = read(); n += 1
        if v != last:
            out.append((t, v)); last = v
    return out, n

def windows(tr, w, aligned, k=400):
    """Power over k windows of w s inside the trace: from two arbitrary reads (the counter's
    value then is its last change) or from one change to the first change at least w later."""
    t0, t1 = tr[1][0], tr[-1][0]
    if t1 - t0 < w * 1.5: return []
    val = lambda t: [v for (s, v) in tr if s <= t][-1]
    res = []
    for _ in range(k):
        a = random.uniform(t0, t1 - w * 1.2)
        if aligned:
            i = next(j for j, (s, _) in enumerate(tr) if s >= a)
            jj = [j for j, (s, _) in enumerate(tr) if s >= tr[i][0] + w]
            if not jj: continue
            j = jj[0]
            dt, de = tr[j][0] - tr[i][0], tr[j][1] - tr[i][1]
        else:
            dt, de = w, val(a + w) - val(a)
        res.append(de * 1e-3 / dt)
    return res

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix"); ap.add_argument("--shape", default="8192x8192x8192")
    ap.add_argument("--load", type=float, default=6.0); ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    a = ap.parse_args()
    read = nvml()
    n0 = 2000; s = time.perf_counter()
    for _ in range(n0): read()
    cost_us = (time.perf_counter() - s) / n0 * 1e6
    idle, nidle = trace(read, 2.0)
    tb = os.path.join(a.prefix, "bin", "tilebench")
    so = os.path.join(a.prefix, "lib", "tilebench", "variants", "cublaslt.so")
    db = os.path.join(a.out, "energy-probe-load.db")
    p = subprocess.Popen([tb, "sweep", "--variants", so, "--shapes", a.shape, "--no-energy", "--no-progress",
                          "--quiet", "--db", db, "--stop",
                          "fixed:samples=1000000,max-samples=1000000,max-time=%g" % (a.load + 3)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2.5)   # start-up, validation, warm-up: the load is steady after this
    busy, nbusy = trace(read, a.load)
    p.wait()
    print("one read of the counter: %.1f us (mean of %d)" % (cost_us, n0))
    for name, tr, n in (("idle", idle, nidle), ("loaded", busy, nbusy)):
        iv = [(tr[i + 1][0] - tr[i][0]) * 1e3 for i in range(1, len(tr) - 1)]
        pw = [(tr[i + 1][1] - tr[i][1]) * 1e-3 / (tr[i + 1][0] - tr[i][0]) for i in range(1, len(tr) - 1)]
        if not iv:
            print("%s: %d reads, the counter did not change" % (name, n)); continue
        q = sorted(iv)
        print("%s: %d reads, %d changes; update period median %.2f ms (min %.2f, p10 %.2f, p90 %.2f, max %.2f); "
              "power between changes median %.1f W (min %.1f, max %.1f)"
              % (name, n, len(tr) - 1, statistics.median(iv), q[0], q[len(q) // 10], q[len(q) * 9 // 10], q[-1],
                 statistics.median(pw), min(pw), max(pw)))
    if len(busy) > 4:
        ref = (busy[-1][1] - busy[1][1]) * 1e-3 / (busy[-1][0] - busy[1][0])
        print("loaded: steady power over the whole trace %.1f W; windows (400 each, random starts):" % ref)
        print("| window ms | arbitrary reads: p5..p95 of power / steady - 1 | edge to edge: p5..p95 | edge to edge: max |")
        print("|---|---|---|---|")
        for w in (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0):
            row = []
            for al in (False, True):
                r = sorted(x / ref - 1 for x in windows(busy, w, al))
                row.append(r)
            if not row[0] or not row[1]: continue
            f = lambda r: "%+.1f %% .. %+.1f %%" % (r[len(r) // 20] * 100, r[len(r) * 19 // 20] * 100)
            print("| %d | %s | %s | %.1f %% |" % (w * 1e3, f(row[0]), f(row[1]), max(abs(x) for x in row[1]) * 100))
    with open(os.path.join(a.out, "energy-probe.json"), "w") as fh:
        json.dump({"read_us": cost_us, "idle": idle, "loaded": busy}, fh)

main()
