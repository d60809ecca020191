#!/usr/bin/env python3
"""rank-compare.py - do two sweeps of the same variants and shapes rank them alike?

Reads two tilebench databases (any schema since 1: only measurements, variants and problems)
straight from SQLite and prints, per shape and overall:
  - pairs of variants (both measured ok in both files) that the two runs order differently,
    split by how far apart the pair is in each run (a tie band, default 3 %: pairs closer than
    that in either run are ties, whose order means nothing);
  - the ratio of each item's median, B over A (median and range per shape), and how many items
    moved more than their own run-to-run noise allows (the larger rse of the two, times 3);
  - rank-1 of each shape in both.
With --cycles each figure is median x its measurement's median SM clock: whether a difference is
the clock's (sound only where the kernel is compute-bound: docs/method.md).
Used for issue 28's before/after (the build before the harness-cost changes against the build
after, same card) and issue 24's one GPU against two.
  scripts/rank-compare.py A.db B.db [--tie 0.03] [--cycles] [--label-a old] [--label-b new]
Exit 0 when no pair outside the tie band is ordered differently, 1 otherwise, 2 on bad input.
"""
import argparse, itertools, os, statistics, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
from report_data import ReportError, connect   # reads without leaving -wal or -shm behind


CYCLES = False


def load(path):
    if not os.path.isfile(path):
        sys.exit(f"rank-compare: error: no database '{path}'")
    try:
        c = connect(path, tuples=True)
    except ReportError as e:
        sys.exit(f"rank-compare: error: {e}")
    rows = c.execute("SELECT v.name, p.m, p.n, p.k, x.median_ms, x.rse, x.status, x.disposition, x.clock_mhz "
                     "FROM measurements x JOIN variants v ON v.id = x.variant_id "
                     "JOIN problems p ON p.id = x.problem_id").fetchall()
    r = {}
    for name, m, n, k, med, rse, st, disp, mhz in rows:
        if st == "ok" and disp == "passed" and med:
            if CYCLES:
                if not mhz:
                    continue
                med = med * mhz  # kilocycles: the figure with the SM clock taken out
            r[(name, (m, n, k))] = (med, rse or 0.0)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a"); ap.add_argument("b")
    ap.add_argument("--tie", type=float, default=0.03)
    ap.add_argument("--label-a", default="A"); ap.add_argument("--label-b", default="B")
    ap.add_argument("--cycles", action="store_true",
                    help="rank by median x the measurement's median SM clock (cycles), not by time")
    o = ap.parse_args()
    global CYCLES
    CYCLES = o.cycles
    A, B = load(o.a), load(o.b)
    shapes = sorted({k[1] for k in A} & {k[1] for k in B}, key=lambda s: s[0] * s[1] * s[2])
    bad = swapped_ties = pairs = 0
    moved = items = 0
    print(f"| shape | items | {o.label_b}/{o.label_a} median (range) | pairs | swapped, both > {100*o.tie:.0f} % apart | swapped within ties | rank 1 {o.label_a} | rank 1 {o.label_b} |")
    print("|---|---|---|---|---|---|---|---|")
    for s in shapes:
        names = sorted(n for (n, sh) in A if sh == s and (n, s) in B)
        ratios = [B[(n, s)][0] / A[(n, s)][0] for n in names]
        for n, q in zip(names, ratios):
            items += 1
            if abs(q - 1) > 3 * max(A[(n, s)][1], B[(n, s)][1], 1e-4):
                moved += 1
        sb = st = sp = 0
        for x, y in itertools.combinations(names, 2):
            ra = A[(x, s)][0] / A[(y, s)][0]; rb = B[(x, s)][0] / B[(y, s)][0]
            sp += 1
            if (ra > 1) != (rb > 1):
                if abs(ra - 1) > o.tie and abs(rb - 1) > o.tie:
                    sb += 1
                    print(f"  ranked differently: {s} {x} vs {y}: {ra:.3f} in {o.label_a}, {rb:.3f} in {o.label_b}",
                          file=sys.stderr)
                else:
                    st += 1
        best_a = min(names, key=lambda n: A[(n, s)][0]); best_b = min(names, key=lambda n: B[(n, s)][0])
        print(f"| {s[0]}x{s[1]}x{s[2]} | {len(names)} | {statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f}) "
              f"| {sp} | {sb} | {st} | {best_a} | {best_b} |")
        bad += sb; swapped_ties += st; pairs += sp
    print(f"\n{pairs} pairs on {len(shapes)} shapes: {bad} ordered differently where both runs put them more than "
          f"{100*o.tie:.0f} % apart, {swapped_ties} swapped inside the tie band; {moved} of {items} items moved by more "
          f"than 3x their larger rse")
    only = (set(A) ^ set(B))
    if only:
        print(f"items passed in one file only: {len(only)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
