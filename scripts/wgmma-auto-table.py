#!/usr/bin/env python3
"""wgmma-auto-table.py - wgmma_auto's dispatch table from a tilebench sweep.

wgmma_auto (variants/wgmma/auto.cu) is one variant that runs, per shape, the point of the
wgmma family a sweep measured fastest there, or the skinny kernel for a few rows. Its table,
variants/wgmma/auto-table.json, lists the points built into it ("points", in the grid's
'TM TN STAGES CM CN SCHEDULE RASTER SWIZZLE [EPILOGUE]' form, as variants/wgmma/CMakeLists.txt)
and, per measured shape, which of them won ("shapes": [m, n, k, index], index -1 for skinny;
a fifth field names the layout when it is not tn: [m, n, k, index, "tt"]);
"pitch_align" (elements, default 8: 16-byte rows) is the row pitch below which A and B are
copied before the TMA kernel (kept from the current table).
This script reads the database straight from SQLite and writes that JSON:

  tilebench sweep --variants build/lib/tilebench/variants-grid --variants build/lib/tilebench/variants \\
      --filter 'wgmma_bf16_*' --filter 'skinny*' --shapes square,llm --db tune.db
  scripts/wgmma-auto-table.py tune.db [more.db ...] --output variants/wgmma/auto-table.json

Several databases may be given (sweeps of different shapes, e.g. one per device call): per
shape the fastest median over all of them wins, and their runs' wall times add up to the tuning
cost. Only ok/passed measurements of the table's own points (and skinny) count; a shape none of them
passed is left out (the dispatcher takes the nearest measured shape). The points come from the
current table (--table, default variants/wgmma/auto-table.json) unless --points FILE names
others, one per line. The sweep's wall time is recorded as the tuning cost. --merge keeps the
current table's rows for the shapes the databases do not measure (a sweep of a few shapes
retunes those rows), adding its tuning time and commands; with --merge, --points may only
append points to the current table's (its rows keep their indices: a new point wins only
the shapes the databases measure). --output writes the
file whole (a temporary beside it, renamed), after the old table was read: never redirect
stdout onto the table itself, which the shell empties before the script reads it. Exit 2 on bad
input, nothing written.
"""
import argparse, json, os, sqlite3, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
from report_data import ReportError, connect   # reads without leaving -wal or -shm behind

HERE = os.path.dirname(os.path.abspath(__file__))


def point_name(spec):
    f = spec.split()
    if len(f) not in (8, 9):
        raise ValueError(f"point '{spec}' needs TM TN STAGES CM CN SCHEDULE RASTER SWIZZLE [EPILOGUE]")
    tm, tn, st, cm, cn, sched, raster, sw = f[:8]
    name = f"wgmma_bf16_{tm}x{tn}x64_c{cm}x{cn}_s{st}_{sched}_raster{raster}_sw{sw}"
    if len(f) == 9:
        name += {"conflict": "_epilogue-conflict", "streamk": "_tail-streamk", "swizzled": ""}[f[8]]
    return name + "_tn"


def portable(cmd):
    """A recorded command line without the paths of the machine it ran on: --db and its file
    dropped, a path under this repository made relative to it, any other absolute path cut to
    its file name (the table is committed; it names no machine's folders)."""
    root = os.path.dirname(HERE) + os.sep
    out, words = [], (cmd or "").split()
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--db":
            i += 2
            continue
        if w.startswith("--db="):
            i += 1
            continue
        if w.startswith(root):
            w = w[len(root):]
        elif w.startswith("/"):
            w = os.path.basename(w)
        out.append(w)
        i += 1
    return " ".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", nargs="+")
    ap.add_argument("--table", default=os.path.join(HERE, "..", "variants", "wgmma", "auto-table.json"))
    ap.add_argument("--points", help="a file of points, one per line (default: the table's)")
    ap.add_argument("--output", help="write the table here (default: standard output)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the current table's rows for shapes the databases do not measure "
                         "(and add their tuning time and commands): a sweep of some shapes "
                         "retunes those rows only")
    o = ap.parse_args()
    for db in o.db:
        if not os.path.isfile(db):
            print(f"wgmma-auto-table: error: no database '{db}'", file=sys.stderr); return 2
    try:
        prev = json.load(open(o.table)) if os.path.isfile(o.table) else {}
        if o.points:
            points = [l.strip() for l in open(o.points) if l.strip() and not l.startswith("#")]
        else:
            points = prev["points"]
        # each point's variants in the four layouts: the tn name less its "_tn", + "_" + layout
        names = {point_name(p)[:-3] + "_" + lay: (i, lay) for i, p in enumerate(points)
                 for lay in ("tn", "nn", "nt", "tt")}
    except (OSError, ValueError, KeyError) as e:
        print(f"wgmma-auto-table: error: points: {e}", file=sys.stderr); return 2
    best, gpus, secs, cmds = {}, set(), 0.0, []
    for db in o.db:
        try:
            c = connect(db, tuples=True)
            rows = c.execute("SELECT v.name, p.m, p.n, p.k, x.median_ms, p.layouts FROM measurements x "
                             "JOIN variants v ON v.id = x.variant_id JOIN problems p ON p.id = x.problem_id "
                             "WHERE x.status = 'ok' AND x.disposition = 'passed' AND x.median_ms > 0").fetchall()
            gpus |= {r[0] for r in c.execute("SELECT DISTINCT gpu_name FROM environment")} - {None}
            runs = c.execute("SELECT phases_json, command_line FROM runs").fetchall()
        except (sqlite3.Error, ReportError) as e:
            print(f"wgmma-auto-table: error: '{db}': {e}", file=sys.stderr); return 2
        for name, m, n, k, med, layout in rows:
            lay = str(layout)[:2]
            if name.startswith("skinny"):
                if lay != "tn":
                    continue
                idx = -1
            else:
                hit = names.get(name)
                if hit is None or hit[1] != lay:
                    continue
                idx = hit[0]
            key = (m, n, k, lay)
            if key not in best or med < best[key][0]:
                best[key] = (med, idx)
        for pj, cmd in runs:
            try:
                secs += json.loads(pj or "{}").get("total_s", 0.0)
            except ValueError:
                pass
            cmds.append(portable(cmd))
    if not best:
        print(f"wgmma-auto-table: error: no ok/passed measurement of the table's points in {', '.join(o.db)}",
              file=sys.stderr); return 2
    if o.merge:
        old = prev.get("points", [])
        if o.points and points[:len(old)] != old:
            print("wgmma-auto-table: error: --merge keeps the current table's points: "
                  "--points must name them first, in order (new points after them)",
                  file=sys.stderr); return 2
        for r in prev.get("shapes", []):
            lay = r[4] if len(r) > 4 else "tn"
            key = (r[0], r[1], r[2], lay)
            if key not in best:
                best[key] = (float("inf"), r[3])
        secs += float(prev.get("tuning_seconds", 0.0))
        cmds = list(prev.get("sweep", [])) + cmds
        gpus = set(gpus) | ({prev["gpu"]} if prev.get("gpu") and prev["gpu"] != "unknown" else set())
    gpus = sorted(gpus)
    table = {
        "comment": "wgmma_auto's dispatch table: made by scripts/wgmma-auto-table.py from a sweep; "
                   "points are built into the library, shapes are [m, n, k, point index] (-1: skinny)",
        "gpu": ", ".join(gpus) or "unknown",
        "sweep": cmds,
        "tuning_seconds": round(secs, 1),
        "skinny_max_m": 16,
        "pitch_align": prev.get("pitch_align", 8),
        "points": points,
        "shapes": [[m, n, k, best[(m, n, k, lay)][1]] + ([] if lay == "tn" else [lay])
                   for (m, n, k, lay) in sorted(best, key=lambda t: (t[3] != "tn", t[3], t[:3]))],
    }
    # one point and one shape a line: a diff of two tables reads as the shapes that moved
    out = json.dumps({k: v for k, v in table.items() if k not in ("points", "shapes")}, indent=1)[:-2]
    out += ',\n "points": [\n' + ",\n".join("  " + json.dumps(p) for p in points) + "\n ],"
    out += '\n "shapes": [\n' + ",\n".join("  " + json.dumps(r) for r in table["shapes"]) + "\n ]\n}\n"
    json.loads(out)
    if not o.output:
        sys.stdout.write(out)
        return 0
    tmp = o.output + ".tmp"
    with open(tmp, "w") as f:
        f.write(out)
    os.replace(tmp, o.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
