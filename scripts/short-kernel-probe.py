#!/usr/bin/env python3
"""short-kernel-probe.py - where do a short GEMM's microseconds go? (issue 6, docs/perf.md)

A diagnostic for the device machine, not part of tilebench: one BF16 GEMM (torch, i.e. cuBLAS)
of size N^3 timed several ways, so that tilebench's methods can be placed against Nsight
Compute's gpu__time_duration:
  events-1     CUDA events around one launch after an L2 flush (what the cold method does)
  events-B2B   events around R back-to-back launches, / R (no flush)
  trace-1      the kernel's own duration from CUPTI activity records (torch.profiler), one
               launch after a flush, device synchronised between launches
  trace-B2B    the same kernel's durations when launched back to back
  trace-graph  the same inside a CUDA graph of R launches
  empty-*      the same recipes around an almost empty kernel (torch.cuda._sleep(1)) and
               around nothing (an event pair): what an isolated launch costs by itself
  python3 scripts/short-kernel-probe.py [N] [--ncu]   (--ncu: only flushed launches, for ncu)
"""
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1024
ncu_mode = "--ncu" in sys.argv
torch.manual_seed(1)
a = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
b = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
d = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")


def gemm():
    torch.matmul(a, b.t(), out=d)


for _ in range(20):
    gemm()
torch.cuda.synchronize()

if ncu_mode:      # 40 flushed, isolated launches; ncu's own flush comes on top
    for _ in range(40):
        flush.zero_()
        gemm()
        torch.cuda.synchronize()
    for _ in range(40):
        flush.zero_()
        torch.cuda._sleep(1)
        torch.cuda.synchronize()
    sys.exit(0)

R = 200


def ev_around(fn, k=60):
    out = []
    for _ in range(k):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        out.append(s.elapsed_time(e) * 1e3)
    return statistics.median(out)


def tr_empty(k=60):
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(k):
            flush.zero_()
            torch.cuda._sleep(1)
            torch.cuda.synchronize()
    ks = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA and ("sleep" in e.name.lower() or "spin" in e.name.lower())]
    return statistics.median([e.time_range.elapsed_us() for e in ks]) if ks else float("nan")


def ev_b2b(k=20):
    out = []
    for _ in range(k):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(R):
            gemm()
        e.record(); e.synchronize()
        out.append(s.elapsed_time(e) * 1e3 / R)
    return statistics.median(out)


def kernel_durations(prof):
    ks = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    names = {}
    for e in ks:
        names.setdefault(e.name, []).append(e.time_range.elapsed_us())
    # the GEMM: the most frequent kernel that is not the flush's fill
    cand = {k: v for k, v in names.items() if "fill" not in k.lower() and "elementwise" not in k.lower()}
    name = max(cand, key=lambda k: len(cand[k]))
    return name, cand[name]


def tr_one(k=60):
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(k):
            flush.zero_()
            gemm()
            torch.cuda.synchronize()
    return kernel_durations(p)


def tr_b2b():
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(R):
            gemm()
        torch.cuda.synchronize()
    return kernel_durations(p)


def tr_graph():
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(3):
            gemm()
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for _ in range(R):
                gemm()
    torch.cuda.synchronize()
    es, ee = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t = []
    for _ in range(10):
        es.record(); g.replay(); ee.record(); ee.synchronize()
        t.append(es.elapsed_time(ee) * 1e3 / R)
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        g.replay()
        torch.cuda.synchronize()
    return statistics.median(t), kernel_durations(p)


rows = []
rows.append(("events-1 (flushed, isolated)", ev_around(gemm)))
rows.append(("events-B2B (per launch)", ev_b2b()))
name, t1 = tr_one()
rows.append(("trace-1 (flushed, isolated)", statistics.median(t1)))
_, tb = tr_b2b()
rows.append(("trace-B2B", statistics.median(tb)))
gt, (_, tg) = tr_graph()
rows.append(("events-graph (per launch)", gt))
rows.append(("trace-graph", statistics.median(tg)))
rows.append(("empty-events-1 (_sleep(1), flushed)", ev_around(lambda: torch.cuda._sleep(1))))
rows.append(("empty-events-pair (nothing between)", ev_around(lambda: None)))
rows.append(("empty-trace-1 (_sleep(1), flushed)", tr_empty()))
print(f"short-kernel probe: {n}^3 BF16, kernel {name[:70]}")
for k, v in rows:
    print(f"  {k:32s} {v:9.3f} us")
