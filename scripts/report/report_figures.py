"""report_figures.py - the report's plots, drawn by matplotlib (Agg, SVG output).

Owns the pictures and nothing else: each function draws one figure from report_data.Data into
an SVG file and returns a Figure record (file, title, alt text, the rows of its table); the page
(report_page.py) lays them out. Every plotted series carries an SVG id (matplotlib's gid) so a
test can count what was drawn: 'bar-I' and 'ci-I' (rankings), 'cell-R-C' (heat map),
'pt-I' (roofline), 'pt-KNOB-I' (design space), 'clk-I' (clock: one line per measurement, one
vertex per sample), 'ratio-I' (before/after). docs/report.md says what each plot shows.
"""
import math

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt                       # noqa: E402
from matplotlib.colors import TwoSlopeNorm            # noqa: E402
from matplotlib.lines import Line2D                   # noqa: E402
from matplotlib.patches import Patch, Rectangle       # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from report_data import REFERENCES                    # noqa: E402

REF_COLOUR = "#3a3a3a"
PALETTE = ["#1f77b4", "#d95f02", "#2ca02c", "#9467bd", "#e7298a", "#8c564b", "#17becf",
           "#bcbd22", "#7f7f7f"]
SERIES = ["#1f77b4", "#d95f02", "#2ca02c", "#9467bd", "#e7298a", "#8c564b", "#17becf", "#bcbd22"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "h"]


def setup():
    matplotlib.rcParams.update({
        "svg.fonttype": "none",          # text stays text: searchable, scalable, small
        "svg.hashsalt": "tilebench",     # the same ids on every run
        "path.simplify": False,          # every sample stays a vertex
        "text.parse_math": False,        # a '$' in a variant name is a dollar sign
        "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
        "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
        "axes.spines.top": False, "axes.spines.right": False,
        "legend.fontsize": 8, "legend.frameon": False,
    })


class Figure:
    def __init__(self, file, title, alt, head, rows, note="", wide=False):
        self.file, self.title, self.alt = file, title, alt
        self.head, self.rows, self.note, self.wide = head, rows, note, wide
        self.details = None     # (summary, head, rows): a longer table folded under the first


def save(fig, path):
    fig.savefig(path, format="svg", bbox_inches="tight", pad_inches=0.08, metadata={"Date": None})
    plt.close(fig)


class Colours:
    """One colour per family, the same in every figure; cuBLAS dark grey."""

    def __init__(self, families):
        self.map = {}
        others = sorted(f for f in set(families) if f != "cublaslt")
        for i, f in enumerate(others):
            self.map[f] = PALETTE[i % len(PALETTE)]
        self.map["cublaslt"] = REF_COLOUR

    def __call__(self, family):
        return self.map.get(family, PALETTE[-1])


def fmt(v, digits=1, unit=""):
    return "-" if v is None else f"{v:.{digits}f}{unit}"


def interval(m):
    if m.ratio is None:
        return "-"
    return f"{m.ratio:.3f} [{m.lo:.3f}, {m.hi:.3f}]"


# ---- 1. per-shape rankings --------------------------------------------------------------------

def ranking(d, p, labels, colours, path):
    """Horizontal bars of TFLOP/s, best first, each with the 95 % interval of its median ratio to
    the best drawn in TFLOP/s at the best's median (tf_best / hi .. tf_best / lo): a whisker that
    reaches the dashed line of the best is a tie ('=1')."""
    rows = d.order.get(p.id, [])
    others = [m for m in d.at(p) if not m.ranked]
    head = ["rank", "variant", "TFLOP/s", "median ms", "rse", "time / best [95 % CI]",
            "% of better cuBLAS", "% of peak", "clock MHz", "samples", "status"]
    table = []
    for m in rows + others:
        pk = d.peak_tflops_at(m.clock_mhz, m.problem.fp8) if m.ranked else None
        table.append([m.rank or "-", m.variant["name"],
                      fmt(m.tflops) if m.ranked else "-",
                      fmt(m.median_ms, 4) if m.ranked else "-",
                      fmt(m.rse * 100 if m.rse is not None and m.ranked else None, 2, " %"),
                      interval(m) if m.ranked else "-",
                      fmt(d.pct_reference(m), 1, " %"),
                      fmt(100 * m.tflops / pk if pk and m.tflops else None, 1, " %"),
                      fmt(m.clock_mhz if m.ranked else None, 0),
                      str(m.n_samples) if m.ranked else "-", m.state()])
    title = f"Ranking at {p.title()}"
    if not rows:
        return Figure(None, title, "", head, table, note="no variant ran and passed validation at this shape")
    n = len(rows)
    fig, ax = plt.subplots(figsize=(8.6, 0.75 + 0.27 * n))
    best = rows[0]
    tfb = best.tflops
    right = 0
    for i, m in enumerate(rows):
        bars = ax.barh(i, m.tflops, height=0.72, color=colours(m.variant["family"]))
        bars.patches[0].set_gid(f"bar-{i}")
        hi_tf = m.tflops
        if m.lo and m.hi:
            lo_tf, hi_tf = tfb / m.hi, tfb / m.lo
            eb = ax.errorbar(m.tflops, i, xerr=[[max(0.0, m.tflops - lo_tf)], [max(0.0, hi_tf - m.tflops)]],
                             fmt="none", ecolor="black", elinewidth=0.9, capsize=2.5)
            eb.lines[2][0].set_gid(f"ci-{i}")
        right = max(right, hi_tf, m.tflops)
        ax.text(max(hi_tf, m.tflops) + tfb * 0.012, i,
                f"{m.tflops:.1f}  " + (m.rank if m.rank.startswith("=") else "#" + m.rank),
                va="center", ha="left", fontsize=8, zorder=4,
                bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none"))
    ax.axvline(tfb, color="#555555", ls="--", lw=0.8, zorder=1)
    ax.set_yticks(range(n))
    ax.set_yticklabels([labels[m.variant["name"]] for m in rows])
    ax.invert_yaxis()
    ax.set_ylim(n - 0.4, -0.6)
    ax.set_xlim(0, right * 1.17)
    ax.set_xlabel("TFLOP/s at the median time   (whisker: 95 % interval of the median time ratio "
                  "to the best, at the best's median)")
    ax.set_title(f"{p.title()}: {n} variants by median time (bar label: TFLOP/s, rank; "
                 "=1: tied with the best)", loc="left")
    fams = []
    for m in rows:
        if m.variant["family"] not in fams:
            fams.append(m.variant["family"])
    ax.legend(handles=[Patch(color=colours(f), label=f or "(no family)") for f in fams],
              loc="lower right", title="family", fontsize=7.5, title_fontsize=7.5)
    save(fig, path)
    note = ""
    if others:
        note = f"{len(others)} not ranked (did not run or failed validation): in the table, not in the chart"
    alt = (f"Bar chart of {n} variants at {p.key}: best {best.variant['name']} at {tfb:.1f} TFLOP/s")
    return Figure(path, title, alt, head, table, note=note)


# ---- 2. heat map ------------------------------------------------------------------------------

def _geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0.0


def heatmap(d, labels, colours, path):
    """Variants x shapes, each cell the variant's % of the better of cublaslt and cublaslt-tuned
    at that shape (100 = as fast; their median times, so the ratio is of times), grey with the
    reason where it did not run or failed; rows by family, then by geometric mean."""
    probs = [p for p in d.problems if d.reference_ms(p)[0]]
    head = ["variant"] + [f"{p.title()} %" for p in probs] + ["geomean %"]
    if not probs:
        return Figure(None, "Heat map: % of the better cuBLAS", "", head, [],
                      note="neither cublaslt nor cublaslt-tuned ran and passed on any shape: no heat map")
    vids = []
    for m in d.meas:
        if m.problem in probs and m.variant["id"] not in vids:
            vids.append(m.variant["id"])
    cell = {(m.variant["id"], m.problem.id): m for m in d.meas}
    pct = {k: d.pct_reference(m) for k, m in cell.items()}
    gm = {v: _geomean([pct.get((v, p.id)) for p in probs]) for v in vids}

    fam_best = {}
    for v in vids:
        f = d.variants[v]["family"]
        fam_best[f] = max(fam_best.get(f, 0.0), gm[v])

    def order(v):     # cuBLAS first, then families by their best variant, each best first
        f = d.variants[v]["family"]
        return (0 if f == "cublaslt" else 1, -fam_best[f], f, -gm[v], d.variants[v]["name"])
    vids.sort(key=order)
    vals = [x for x in pct.values() if x]
    vmax = max(110.0, max(vals) * 1.02) if vals else 110.0
    vmin = min(min(vals) * 0.98, 90.0) if vals else 0.0
    norm = TwoSlopeNorm(vmin=vmin, vcenter=100.0, vmax=vmax)
    cmap = matplotlib.colormaps["RdBu"]
    nr, nc = len(vids), len(probs)
    fig, ax = plt.subplots(figsize=(max(5.6, 2.9 + 1.05 * nc), 1.3 + 0.25 * nr))
    table = []
    for r, v in enumerate(vids):
        name = d.variants[v]["name"]
        trow = [name]
        for c, p in enumerate(probs):
            x = pct.get((v, p.id))
            m = cell.get((v, p.id))
            if x is not None:
                rgba = cmap(norm(x))
                ax.add_patch(Rectangle((c, r), 1, 1, facecolor=rgba, edgecolor="white", lw=0.8,
                                       gid=f"cell-{r}-{c}"))
                lum = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
                ax.text(c + 0.5, r + 0.5, f"{x:.0f}" if x < 99.5 or x >= 100.5 else "100",
                        ha="center", va="center", fontsize=7.5, color="white" if lum < 0.5 else "black")
                trow.append(f"{x:.1f}")
            else:
                ax.add_patch(Rectangle((c, r), 1, 1, facecolor="#e4e4e4", edgecolor="white", lw=0.8,
                                       gid=f"gap-{r}-{c}"))
                s = m.short_state() if m else ""
                ax.text(c + 0.5, r + 0.5, s or "", ha="center", va="center", fontsize=6.5, color="#666666")
                trow.append(m.state() if m else "not measured")
        trow.append(f"{gm[v]:.1f}" if gm[v] else "-")
        table.append(trow)
    ax.set_xlim(0, nc)
    ax.set_ylim(nr, 0)
    ax.set_xticks([c + 0.5 for c in range(nc)])
    ax.set_xticklabels([p.key + (f"\n{p.label}" if p.label else "") for p in probs],
                       rotation=0 if nc <= 6 else 35, ha="center" if nc <= 6 else "right", fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([r + 0.5 for r in range(nr)])
    ax.set_yticklabels([labels[d.variants[v]["name"]] for v in vids], fontsize=8)
    for t, v in zip(ax.get_yticklabels(), vids):
        t.set_color(colours(d.variants[v]["family"]))
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    cb = fig.colorbar(sm, ax=ax, fraction=0.04 if nr > 12 else 0.06, pad=0.02)
    cb.ax.set_yscale("linear")       # ticks evenly spaced in %, not in the norm's two halves
    cb.set_label("% of the better of cublaslt and cublaslt-tuned (100 = as fast)")
    ax.set_title("% of the better cuBLAS per shape (median times; grey: did not run or failed, "
                 "blank: not measured)",
                 loc="left", pad=28 if nc <= 6 else 60)
    save(fig, path)
    alt = f"Heat map of {nr} variants by {nc} shapes, coloured by % of the better cuBLAS"
    return Figure(path, "Heat map: % of the better cuBLAS", alt, head, table, wide=True)


# ---- 3. roofline ------------------------------------------------------------------------------

def _log_ticks(axis):
    """Plain numbers (1, 2, 5, 10, 20, 50, ...) on a log axis."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def roofline(d, labels, colours, path):
    """Every ranked measurement at (arithmetic intensity, TFLOP/s) on log-log axes under the
    tensor and DRAM ceilings: measured by doctor --calibrate when the database has them for this
    GPU, else nominal; the intensity from the DRAM counters where collected (filled markers),
    else the compulsory traffic (hollow: A and B read once, D written once), which every variant
    of a shape shares: the families of one shape are then spread a little sideways (x 0.97 to
    1.03) so that none hides another; the table has the exact figures."""
    ceil = d.ceilings()
    ceil8 = d.ceilings(fp8=True)
    head = ["variant", "shape", "FLOP/byte", "intensity from", "TFLOP/s",
            "attainable TFLOP/s", "% of attainable", "bound"]
    pts = []
    for p in d.problems:
        for m in d.order.get(p.id, []):
            x, how = d.intensity(m)
            if x:
                pts.append((m, x, how))
    title = f"Roofline (ceilings {ceil['source']})"
    if not pts:
        return Figure(None, title, "", head, [], note="no ranked measurement with a known intensity")
    table = []
    fig, ax = plt.subplots(figsize=(8.6, 5.6))
    xs = [x for _, x, _ in pts]
    ys = [m.tflops for m, _, _ in pts]
    ridge = ceil["tflops"] * 1000.0 / ceil["dram_gbps"] if ceil["tflops"] and ceil["dram_gbps"] else None
    lo_x = min(xs + ([ridge] if ridge else [])) / 4
    hi_x = max(xs + ([ridge] if ridge else [])) * 2.5
    fams = []
    for m, _, _ in pts:
        if m.variant["family"] not in fams:
            fams.append(m.variant["family"])
    for i, (m, x, how) in enumerate(pts):
        fam = m.variant["family"]
        col = colours(fam)
        mk = MARKERS[fams.index(fam) % len(MARKERS)]
        xd = x
        if how == "compulsory" and len(fams) > 1:
            xd = x * (1 + 0.06 * (fams.index(fam) / (len(fams) - 1) - 0.5))
        ax.plot([xd], [m.tflops], ls="none", marker=mk, ms=6, mew=1.1, mec=col,
                mfc=col if how == "measured" else "none", alpha=0.9, gid=f"pt-{i}")
        att, bound = None, ""
        cp = ceil8 if m.problem.fp8 else ceil      # an FP8 problem under the FP8 ceiling
        if cp["tflops"] and cp["dram_gbps"]:
            mem = x * cp["dram_gbps"] / 1000.0
            att, bound = (mem, "memory") if mem < cp["tflops"] else (cp["tflops"], "compute")
        elif cp["tflops"]:
            att, bound = cp["tflops"], "compute"
        table.append([m.variant["name"], m.problem.title(), f"{x:.1f}", how,
                      fmt(m.tflops), fmt(att), fmt(100 * m.tflops / att if att else None, 1, " %"), bound])
    ymin = min(ys) / 3
    any8 = any(m.problem.fp8 for m, _, _ in pts)
    ymax = max(ys + [ceil["tflops"] or 0] + [(ceil8["tflops"] or 0) if any8 else 0]) * 2.2
    if any8 and ceil8["tflops"]:
        ax.axhline(ceil8["tflops"], color="black", lw=1.0, ls="--", gid="ceil-compute-fp8")
        ax.text(hi_x / 1.05, ceil8["tflops"] * 1.06,
                f"FP8 tensor ceiling {ceil8['tflops']:.0f} TFLOP/s (e4m3 problems), "
                f"{ceil8['source']}: {ceil8['tflops_how']}", fontsize=7.5, va="bottom", ha="right")
    if ceil["tflops"]:
        ax.axhline(ceil["tflops"], color="black", lw=1.3, gid="ceil-compute")
        ax.text(hi_x / 1.05, ceil["tflops"] * 1.06,
                f"tensor ceiling {ceil['tflops']:.0f} TFLOP/s, {ceil['source']}: {ceil['tflops_how']}",
                fontsize=7.5, va="bottom", ha="right")
    if ceil["dram_gbps"]:
        top = ceil["tflops"] or ymax
        xe = min(hi_x, top * 1000.0 / ceil["dram_gbps"])
        ax.plot([lo_x, xe], [lo_x * ceil["dram_gbps"] / 1000.0, xe * ceil["dram_gbps"] / 1000.0],
                color="black", lw=1.3, gid="ceil-memory")
        ax.text(lo_x * 1.12, lo_x * ceil["dram_gbps"] / 1000.0 / 1.25,
                f"DRAM {ceil['dram_gbps']:.0f} GB/s\n{ceil['source']}: {ceil['dram_how']}",
                fontsize=7.5, va="top", ha="left", zorder=5,
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1.5))
    missing = [w for w, v in (("tensor", ceil["tflops"]), ("DRAM", ceil["dram_gbps"])) if not v]
    if missing:
        ax.text(0.01, 0.99, f"no {' or '.join(missing)} ceiling known for this GPU "
                f"({(d.env or {}).get('gpu_name') or 'unnamed'}): run tilebench doctor --calibrate",
                transform=ax.transAxes, fontsize=7.5, va="top", color="#a04000")
    if ridge:
        ax.axvline(ridge, color="#999999", lw=0.7, ls=":")
        ax.text(ridge * 1.05, ymin * 1.15, f"ridge {ridge:.0f} FLOP/byte", fontsize=7, color="#555555",
                rotation=90, va="bottom", zorder=5,
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1))
    # the shapes on a top axis, at the intensity of their column
    cols = {}
    for m, x, how in pts:
        if how == "compulsory":
            cols.setdefault(m.problem.key, x)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(ymin, ymax)
    _log_ticks(ax.xaxis)
    _log_ticks(ax.yaxis)
    if cols:
        top = ax.secondary_xaxis("top")
        top.set_xticks(list(cols.values()))
        top.set_xticklabels(list(cols.keys()), rotation=35, ha="left", rotation_mode="anchor", fontsize=7)
        top.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        top.tick_params(length=3)
    ax.set_xlabel("arithmetic intensity, FLOP per DRAM byte (filled: measured by the DRAM counters; "
                  "hollow: compulsory traffic)")
    ax.set_ylabel("TFLOP/s at the median time")
    ax.set_title(f"Roofline: ceilings {ceil['what']}", loc="left", fontsize=9)
    if cols:    # the title above the shapes' labels
        r = fig.canvas.get_renderer()
        over = top.get_tightbbox(r).y1 - ax.get_window_extent(r).y1
        ax.title.set_y(1 + (over + 8) / ax.get_window_extent(r).height)
    ax.legend(handles=[Line2D([], [], ls="none", marker=MARKERS[i % len(MARKERS)], mec=colours(f),
                              mfc=colours(f), label=f or "(no family)") for i, f in enumerate(fams)],
              loc="lower right", title="family")
    ax.grid(True, which="major", color="#eeeeee", lw=0.6)
    save(fig, path)
    alt = f"Roofline of {len(pts)} measurements with {ceil['source']} ceilings"
    return Figure(path, title, alt, head, table)


# ---- 4. design space --------------------------------------------------------------------------

KNOB_GROUPS = [("tile", ("tile_m", "tile_n", "tile_k")), ("cluster", ("cluster_m", "cluster_n")),
               ("raster", ("raster", "swizzle"))]
KNOB_ORDER = ["tile", "stages", "schedule", "cluster", "raster", "warps"]


def knobs_of(params):
    """{knob: value} of a variant: tile, cluster and raster (with its swizzle band) grouped, every
    other parameter its own knob."""
    out, used = {}, set()
    for knob, keys in KNOB_GROUPS:
        if any(k in params for k in keys):
            vals = [params.get(k) for k in keys if k in params]
            if knob == "tile":
                out[knob] = "x".join(str(v) for v in vals)
            elif knob == "cluster":
                out[knob] = "c" + "x".join(str(v) for v in vals)
            else:
                out[knob] = " sw".join(str(v) for v in vals)
            used.update(keys)
    for k, v in params.items():
        if k not in used:
            out[k] = v if isinstance(v, (int, float, str)) else str(v)
    return out


def _sort_key(v):
    if isinstance(v, (int, float)):
        return (0, v, "")
    parts = str(v).replace("c", "").split("x")
    try:
        nums = [float(x) for x in parts]
        return (0, math.prod(nums), str(v))
    except ValueError:
        return (1, 0, str(v))


def design_space(d, family, labels, colours, path):
    """A family's TFLOP/s against one knob at a time around its best point (the variant with
    results on the most shapes, then the highest geometric mean TFLOP/s): for each knob, the
    variants that differ from the best in that knob only; where none does, those that differ in
    it and in one other knob (hollow markers, the other knob in the table). One series per shape."""
    vids = [v for v, var in d.variants.items() if var["family"] == family]
    kn = {v: knobs_of(d.variants[v]["params"]) for v in vids}
    for v in vids:                       # a knob a variant does not set reads "(none)"
        for k in {k for u in vids for k in kn[u]}:
            kn[v].setdefault(k, "(none)")
    keys = sorted({k for v in vids for k in kn[v]},
                  key=lambda k: (KNOB_ORDER.index(k) if k in KNOB_ORDER else 99, k))
    varying = [k for k in keys if len({str(kn[v].get(k)) for v in vids}) > 1]
    res = {}
    for m in d.meas:
        if m.ranked and m.variant["id"] in kn:
            res[(m.variant["id"], m.problem.id)] = m
    probs = [p for p in d.problems if any((v, p.id) in res for v in vids)]
    if len(vids) < 2 or not varying or not probs:
        return None
    score = {v: (sum(1 for p in probs if (v, p.id) in res),
                 _geomean([res[(v, p.id)].tflops for p in probs if (v, p.id) in res])) for v in vids}
    best = max(vids, key=lambda v: (score[v], -v))
    panels = []
    missing = []
    for k in varying:
        others = [x for x in varying if x != k]
        cand = [(v, [x for x in others if str(kn[v].get(x)) != str(kn[best].get(x))]) for v in vids
                if v != best and str(kn[v].get(k)) != str(kn[best].get(k)) and score[v][0] > 0]
        if not cand:
            missing.append(k)
            continue
        fewest = min(len(diff) for _, diff in cand)
        if fewest > 1:
            missing.append(k)
            continue
        chosen = [(v, diff) for v, diff in cand if len(diff) == fewest]
        panels.append((k, [(best, [])] + chosen))
    head = ["knob", "value", "variant", "also differs in"] + [p.title() + " TFLOP/s" for p in probs]
    title = f"Design space of {family}"
    if not panels:
        return Figure(None, title, "", head, [],
                      note=f"no variant of {family} differs from its best point "
                           f"({d.variants[best]['name']}) in one knob ({', '.join(varying)})")
    ncol = min(3, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.3 * ncol + 0.4, 2.9 * nrow + 0.5), squeeze=False,
                             sharey=True)
    table = []
    for a, (k, members) in zip(axes.flat, panels):
        values = sorted({kn[v].get(k) for v, _ in members}, key=_sort_key)
        xpos = {str(val): i for i, val in enumerate(values)}
        numeric = all(isinstance(val, (int, float)) for val in values)
        annotated = set()
        for si, p in enumerate(probs):
            pts = sorted(((xpos[str(kn[v].get(k))], res[(v, p.id)].tflops, v, diff) for v, diff in members
                          if (v, p.id) in res), key=lambda t: t[0])
            col = SERIES[si % len(SERIES)]
            exact = [t for t in pts if not t[3]]     # a line only through single-knob moves
            if numeric and len(exact) > 1:
                a.plot([t[0] for t in exact], [t[1] for t in exact], color=col, lw=0.8, alpha=0.6)
            for j, (x, y, v, diff) in enumerate(pts):
                isbest = v == best
                a.plot([x], [y], ls="none", marker="*" if isbest else MARKERS[si % len(MARKERS)],
                       ms=11 if isbest else 6, mec=col, mfc="none" if diff else col,
                       mew=1.2, gid=f"pt-{k}-{si}-{j}")
                if diff and v not in annotated:
                    annotated.add(v)
                    last = x == len(values) - 1      # the label on the side away from the edge
                    a.annotate("+" + ", ".join(f"{o} {kn[v].get(o)}" for o in diff), (x, y),
                               xytext=(-7 if last else 7, 0), textcoords="offset points", fontsize=6.5,
                               va="center", ha="right" if last else "left", color="#555555")
        a.set_xticks(range(len(values)))
        a.set_xticklabels([str(v) for v in values], rotation=25 if len(values) > 3 else 0,
                          ha="right" if len(values) > 3 else "center", fontsize=7.5)
        a.set_xlim(-0.6, len(values) - 0.4)
        a.set_xlabel(k)
        a.grid(True, axis="y", color="#eeeeee", lw=0.6)
        for v, diff in members:
            row = [k, str(kn[v].get(k)), d.variants[v]["name"],
                   "(best point)" if v == best else (", ".join(f"{x} {kn[v].get(x)}" for x in diff) or "-")]
            row += [fmt(res[(v, p.id)].tflops) if (v, p.id) in res else "-" for p in probs]
            table.append(row)
    for a in axes.flat[len(panels):]:
        a.set_visible(False)
    for r in range(nrow):
        axes[r][0].set_ylabel("TFLOP/s")
    handles = [Line2D([], [], ls="none", marker="*", ms=10, mec="black", mfc="black", label="best point")]
    handles += [Line2D([], [], ls="none", marker=MARKERS[i % len(MARKERS)], color=SERIES[i % len(SERIES)],
                       label=p.key) for i, p in enumerate(probs)]
    if any(diff for _, members in panels for _, diff in members):
        handles.append(Line2D([], [], ls="none", marker="o", mec="black", mfc="none",
                              label="hollow: differs in one more knob"))
    fig.tight_layout()
    h = fig.get_figheight()
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 5),
               bbox_to_anchor=(0.5, 1.0 + 0.02 / h), fontsize=7.5)
    fig.suptitle(f"{family}: TFLOP/s one knob at a time around {labels[d.variants[best]['name']]}",
                 y=1.0 + 0.42 / h, va="bottom", fontsize=10, fontweight="bold")
    save(fig, path)
    note = f"no neighbour of the best point in: {', '.join(missing)}" if missing else ""
    alt = f"Design space of {family}: {len(panels)} knobs around {d.variants[best]['name']}"
    return Figure(path, title, alt, head, table, note=note)


# ---- 5. clock and power of one shape ----------------------------------------------------------

def clock(d, p, labels, colours, path, max_rows=6000):
    """The SM clock stamped with every sample of every measurement at p, against the sample's
    index (the order each variant's samples were taken; variants interleave round by round),
    with NVML's summary over the shape (clock range, power mean and max, power-capped samples)."""
    ms = [m for m in d.at(p) if m.n_samples]
    smp = d.samples([m.id for m in ms])
    ms = [m for m in ms if any(c is not None for _, _, c in smp[m.id])]
    head = ["variant", "samples", "clock min MHz", "clock median MHz", "clock max MHz",
            "below the low-clock mark", "NVML power mean W", "NVML power max W", "NVML power-capped samples"]
    title = f"Clock and power at {p.title()}"
    if not ms:
        return Figure(None, title, "", head, [], note="no sample at this shape has a clock stamp")
    ms.sort(key=lambda m: (0, d.order[p.id].index(m)) if m.ranked else (1, 0))
    hl = [m for m in ms if m.ranked][:4]
    hl += [m for m in ms if m.variant["name"] in REFERENCES and m not in hl]
    fig, ax = plt.subplots(figsize=(8.6, 4.2))
    table, rows = [], []
    low = None
    for i, m in enumerate(ms):
        pts = [(x, c) for x, _, c in smp[m.id] if c is not None]
        clk = sorted(c for _, c in pts)
        is_hl = m in hl
        ax.plot([x for x, _ in pts], [c for _, c in pts], lw=1.0 if is_hl else 0.6,
                color=SERIES[hl.index(m) % len(SERIES)] if is_hl else "#bbbbbb",
                alpha=0.95 if is_hl else 0.7, zorder=3 if is_hl else 2, gid=f"clk-{i}",
                label=labels[m.variant["name"]] if is_hl else None)
        lowmark = m.extra.get("low_clock_mhz")
        if isinstance(lowmark, (int, float)):
            low = lowmark
        nv = m.extra.get("nvml") if isinstance(m.extra.get("nvml"), dict) else {}
        nlow = sum(1 for c in clk if low and c < low) if low else None
        table.append([m.variant["name"], str(len(smp[m.id])),
                      fmt(clk[0], 0), fmt(clk[len(clk) // 2], 0), fmt(clk[-1], 0),
                      str(nlow) if nlow is not None else "-",
                      fmt(nv.get("power_w_mean"), 0), fmt(nv.get("power_w_max"), 0),
                      (f"{nv.get('power_capped_samples')} of {nv.get('samples')}"
                       if nv.get("samples") is not None else "-")])
        for x, ms_, c in smp[m.id]:
            rows.append([m.variant["name"], str(x), fmt(ms_, 5), fmt(c, 0)])
    if len(ms) > len(hl):
        ax.plot([], [], color="#bbbbbb", lw=0.8, label=f"{len(ms) - len(hl)} other variants")
    if low:
        ax.axhline(low, color="#c0392b", lw=0.8, ls="--")
        ax.text(0, low, f" low-clock mark {low:.0f} MHz (samples below it are flagged)", color="#c0392b",
                fontsize=7, va="bottom")
    # NVML's view of the whole shape (every measurement of a shape shares the sampler's summary)
    nvs = [m.extra["nvml"] for m in ms if isinstance(m.extra.get("nvml"), dict)]
    limit = (d.env or {}).get("power_limit_mw")
    if nvs:
        pm = [n.get("power_w_mean") for n in nvs if isinstance(n.get("power_w_mean"), (int, float))]
        px = [n.get("power_w_max") for n in nvs if isinstance(n.get("power_w_max"), (int, float))]
        capped = [(n.get("power_capped_samples"), n.get("samples")) for n in nvs]
        lo_c = min((n.get("sm_mhz_min") for n in nvs if isinstance(n.get("sm_mhz_min"), (int, float))), default=None)
        hi_c = max((n.get("sm_mhz_max") for n in nvs if isinstance(n.get("sm_mhz_max"), (int, float))), default=None)
        parts = []
        if pm:
            parts.append(f"power mean {min(pm):.0f}" + (f"-{max(pm):.0f}" if max(pm) - min(pm) >= 1 else "") + " W")
        if px:
            parts.append(f"max {max(px):.0f} W" + (f" of the {limit / 1000:.0f} W limit" if limit and limit > 0 else ""))
        c0 = capped[0]
        if c0[0] is not None and c0[1]:
            parts.append(f"power-capped in {c0[0]} of {c0[1]} NVML samples")
        if lo_c is not None and hi_c is not None:
            parts.append(f"NVML SM clock {lo_c:.0f}-{hi_c:.0f} MHz")
        if parts:
            ax.text(0.0, -0.15, "NVML over this shape's timing: " + ", ".join(parts), transform=ax.transAxes,
                    fontsize=7.5, va="top", color="#333333")
    ax.set_xlabel("sample index (the order a variant's samples were taken; variants interleaved round by round)")
    ax.set_ylabel("SM clock with the sample (MHz)")
    ax.set_title(f"SM clock of every sample at {p.title()}", loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, title="variant (ranked best first)",
              title_fontsize=7.5)
    ax.grid(True, color="#eeeeee", lw=0.6)
    save(fig, path)
    alt = f"SM clock of {sum(len(smp[m.id]) for m in ms)} samples of {len(ms)} variants at {p.key}"
    f = Figure(path, title, alt, head, table)
    if len(rows) <= max_rows:
        f.details = (f"every sample ({len(rows)})", ["variant", "index", "ms", "SM clock MHz"], rows)
    else:
        f.note = (f"{len(rows)} samples: too many to list here; sqlite3 -readonly DB \"SELECT * FROM samples "
                  f"WHERE measurement_id IN ({', '.join(str(m.id) for m in ms)})\"")
    return f


# ---- 6. before / after ------------------------------------------------------------------------

CHANGE_COLOUR = {"slower": "#c0392b", "faster": "#2471a3", "unchanged": "#7f7f7f", "control": "#000000"}


def compare(doc, labels, path, base_run, head_run, what=None):
    """Each (variant, shape) both runs timed: the ratio of median times after / before with its
    95 % bootstrap interval as tilebench compare computed it (the gate's statistic), coloured by
    its class; the band is the threshold. Rows without a ratio (new, removed, newly invalid...)
    are in the table only."""
    rows = doc.get("rows", [])
    thr = doc.get("threshold") or 0.02
    ctl = doc.get("control") or ""
    head = ["variant", "shape", "before ms", "after ms", "after / before [95 % CI]", "change", "note"]
    table = []
    pts = []
    for r in rows:
        name = str(r.get("variant"))
        ratio = r.get("ratio")
        table.append([name, str(r.get("shape")), fmt(r.get("base_median_ms"), 4),
                      fmt(r.get("head_median_ms"), 4),
                      f"{ratio:.3f} [{r.get('lo'):.3f}, {r.get('hi'):.3f}]" if isinstance(ratio, (int, float))
                      and isinstance(r.get("lo"), (int, float)) and isinstance(r.get("hi"), (int, float))
                      else "-",
                      str(r.get("change")) + (" (FAIL)" if r.get("fails") else ""), str(r.get("note") or "")])
        if isinstance(ratio, (int, float)) and isinstance(r.get("lo"), (int, float)):
            pts.append(r)
    title = f"Before/after: {what or f'run {head_run} against run {base_run}'}"
    if not pts:
        return Figure(None, title, "", head, table, note="no (variant, shape) was timed in both runs")
    n = len(pts)
    fig, ax = plt.subplots(figsize=(8.6, 0.9 + 0.26 * n))
    ax.axvspan(1 - thr, 1 + thr, color="#eeeeee", zorder=0)
    ax.axvline(1, color="#555555", lw=0.8)
    lo_all, hi_all = 1 - thr, 1 + thr
    for i, r in enumerate(pts):
        col = CHANGE_COLOUR.get(r.get("change"), "#7f7f7f")
        eb = ax.errorbar(r["ratio"], i, xerr=[[r["ratio"] - r["lo"]], [r["hi"] - r["ratio"]]], fmt="none",
                         ecolor=col, elinewidth=1.2, capsize=2.5)
        eb.lines[2][0].set_gid(f"ratioci-{i}")
        ax.plot([r["ratio"]], [i], ls="none", marker="o", ms=5, color=col, gid=f"ratio-{i}")
        lo_all, hi_all = min(lo_all, r["lo"]), max(hi_all, r["hi"])
    span = hi_all - lo_all
    ax.set_xlim(lo_all - 0.08 * span, hi_all + 0.08 * span)
    ax.set_yticks(range(n))
    ax.set_yticklabels([f"{labels.get(str(r['variant']), r['variant'])}  @ {r['shape']}" for r in pts], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("median time after / before   (> 1: slower; grey band: the threshold, "
                  f"\u00b1{thr * 100:g} %; whiskers: 95 % bootstrap interval)")
    what = (what or f"run {head_run} against run {base_run}") + (f", each divided by {ctl}'s ratio" if ctl else "")
    ax.set_title(f"Before/after: {what}", loc="left")
    present = [c for c in ("slower", "faster", "unchanged", "control") if any(r.get("change") == c for r in pts)]
    names = {"control": f"control ({ctl}): its own ratio, the drift divided out"}
    ax.legend(handles=[Line2D([], [], ls="none", marker="o", color=CHANGE_COLOUR[c], label=names.get(c, c))
                       for c in present], loc="upper left", bbox_to_anchor=(1.01, 1.0), title="change")
    ax.grid(True, axis="x", color="#eeeeee", lw=0.6)
    save(fig, path)
    left = len(rows) - n
    note = f"{left} rows without a ratio (new, removed, invalid or not timed): in the table" if left else ""
    alt = f"Before/after ratios of {n} variant-shape pairs, {what}"
    return Figure(path, title, alt, head, table, note=note)
