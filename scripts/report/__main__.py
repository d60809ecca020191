"""scripts/report - the plotting half of `tilebench report` (harness/cli/cmd_report.c runs it;
docs/report.md): reads one run from the SQLite file (read-only), draws its figures with
matplotlib (Agg, SVG) into the output directory and writes index.html there, with every figure
inline and the numbers behind each as a table.

    python3 -B scripts/report --db FILE --run ID --output DIR --ranks FILE --tilebench EXE
                              [--compare RUN [--control NAME]] [--shape-id PROBLEM]
    python3 -B scripts/report chart --json FILE --output CHART.svg --title TEXT   (report_chart.py)

--ranks is the ranking tilebench computed (report/rank.c, as show prints it), --tilebench the
binary that runs `tilebench compare` for --compare, so the before/after figures are the gate's.
The C command checks the arguments, the database and the directory first and moves DIR into
place only when this exits 0. Exit: 0 written, 1 failed while writing, 2 bad input or a
missing requirement (matplotlib), each with one line on standard error. With
TILEBENCH_REPORT_DEBUG=1 an unexpected failure prints its traceback too.
"""
import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import traceback
import warnings

from report_names import LEGEND, abbreviations, clean, slug


def die(msg, code):
    print("tilebench: error: " + clean(msg), file=sys.stderr)
    sys.exit(code)


class Args(argparse.ArgumentParser):
    def error(self, message):
        die(f"report script: {message}", 2)


def parse(argv):
    a = Args(prog="scripts/report", add_help=False)
    a.add_argument("--db", required=True)
    a.add_argument("--run", type=int, required=True)
    a.add_argument("--output", required=True)
    a.add_argument("--ranks", required=True)
    a.add_argument("--tilebench", default="tilebench")
    a.add_argument("--compare", type=int)
    a.add_argument("--control")
    a.add_argument("--shape-id", type=int)
    return a.parse_args(argv)


def run_compare(tb, db, base, head, control):
    """`tilebench compare BASE HEAD --format json`: the gate's ratios and intervals."""
    env = dict(os.environ)
    env.pop("GITHUB_STEP_SUMMARY", None)        # a report is no step summary
    cmd = [tb, "compare", str(base), str(head), "--db", db, "--format", "json"]
    if control:
        cmd += ["--control", control]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        die(f"cannot run '{tb} compare': {e}", 1)
    if r.returncode not in (0, 1):
        why = [x for x in r.stderr.splitlines() if x.strip()]
        msg = why[-1] if why else f"exit status {r.returncode}"
        die(f"tilebench compare {base} {head} failed: {msg.replace('tilebench: error: ', '')}",
            2 if r.returncode == 2 else 1)
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        die(f"tilebench compare wrote no JSON: {e}", 1)


def header(page, d, db, ceil):
    from report_page import text
    run, env = d.run, d.env or {}
    rows = [("run", f"{run['id']}, {run.get('status')}, {run.get('started_at')} to {run.get('ended_at') or '(not ended)'}"),
            ("command", run.get("command_line") or ""),
            ("tilebench", f"{run.get('version') or '?'} (git {run.get('git_sha') or 'unknown'})"),
            ("database", os.path.basename(db))]
    if env:
        cc = f"sm_{env.get('cc_major')}{env.get('cc_minor')}"
        pl = env.get("power_limit_mw")
        rows.append(("GPU", f"{env.get('gpu_name')} ({cc}, {env.get('sm_count')} SMs, max SM clock "
                            f"{env.get('sm_clock_max_mhz')} MHz"
                            + (f", power limit {pl / 1000:.0f} W" if pl and pl > 0 else "") + ")"))
        cuda = env.get("cuda_runtime_version")
        rows.append(("software", f"driver {env.get('driver_version')}, CUDA runtime "
                                 f"{cuda // 1000 if isinstance(cuda, int) else '?'}."
                                 f"{(cuda % 1000) // 10 if isinstance(cuda, int) else '?'}, cuBLASLt "
                                 f"{env.get('cublas_version')}, host {env.get('hostname')}"))
    else:
        rows.append(("GPU", "not recorded with this run"))
    rows.append(("ranking", "as tilebench show: ranked = ran and passed validation; 95 % percentile "
                            "bootstrap interval of each median time ratio to the best (2000 resamples); "
                            "'=1' when it contains 1 (tied)"))
    rows.append(("roofline ceilings", f"{ceil['what']}"))
    page.raw(f"<h1>{text('tilebench report: run ' + str(run['id']))}</h1>")
    page.raw('<table class="meta">' + "".join(f"<tr><td>{text(k)}</td><td>{text(v)}</td></tr>" for k, v in rows)
             + "</table>")
    page.contents()


def build(args):
    import report_data
    import report_figures as F
    from report_page import Page

    d = report_data.load(args.db, args.run, args.ranks)
    F.setup()
    out = args.output
    compare_doc = None
    if args.compare:
        compare_doc = run_compare(args.tilebench, args.db, args.compare, args.run, args.control)
    names = [v["name"] for v in d.variants.values()]
    if compare_doc:
        names += [str(r.get("variant")) for r in compare_doc.get("rows", [])]
    labels = abbreviations(sorted(set(names)))
    colours = F.Colours(v["family"] for v in d.variants.values())
    ceil = d.ceilings()
    page = Page(f"tilebench report: run {d.run['id']}")
    header(page, d, args.db, ceil)
    used = set()

    def fname(stem, fallback):
        s = slug(stem, fallback)
        if s in used:
            s = fallback
        used.add(s)
        return os.path.join(out, s + ".svg")

    page.h(2, "Rankings per shape", "rankings")
    if not d.problems:
        page.p("this run has no measurements", "note")
    for p in d.problems:
        tid = slug(f"rank-{p.key}", f"rank-p{p.id}")
        page.h(3, f"{p.title()}  ({p.dtypes}{p.scalars()})", tid)
        page.figure(F.ranking(d, p, labels, colours, fname(f"rank-{p.key}", f"rank-p{p.id}")), tid)

    page.h(2, "Heat map: variants x shapes", "heatmap")
    page.figure(F.heatmap(d, labels, colours, fname("heatmap", "heatmap")), "heatmap")

    page.h(2, "Roofline", "roofline")
    page.figure(F.roofline(d, labels, colours, fname("roofline", "roofline")), "roofline")

    page.h(2, "Design space per family", "design")
    fams = []
    for v in d.variants.values():
        if v["family"] not in fams and v["family"] != "cublaslt":
            fams.append(v["family"])
    drawn = 0
    for i, fam in enumerate(fams):
        fig = F.design_space(d, fam, labels, colours, fname(f"design-{fam}", f"design-{i + 1}"))
        if fig is None:
            continue
        drawn += 1
        tid = slug(f"design-{fam}", f"design-{i + 1}")
        page.h(3, fam or "(no family)", tid)
        page.figure(fig, tid)
    if not drawn:
        page.p("no family has two variants that differ in a parameter", "note")

    page.h(2, "Clock and power of one shape", "clock")
    cands = [p for p in d.problems if p.id == args.shape_id] if args.shape_id else \
        sorted(d.problems, key=lambda p: (-p.flops, p.id))
    fig = None
    for p in cands:
        fig = F.clock(d, p, labels, colours, fname("clock", "clock"))
        if fig.file:
            break
    if fig is None:
        page.p("this run has no measurements", "note")
    else:
        page.figure(fig, "clock")

    if compare_doc is not None:
        page.h(2, "Before/after", "compare")
        page.p(f"tilebench compare {args.compare} {args.run}" + (f" --control {args.control}" if args.control else "")
               + f": verdict {compare_doc.get('verdict')}, "
               + ", ".join(f"{v} {k}" for k, v in (compare_doc.get("counts") or {}).items() if v), "note")
        page.figure(F.compare(compare_doc, labels, fname("compare", "compare"), args.compare, args.run), "compare")

    page.h(2, "Variants and their labels", "variants")
    page.p(LEGEND, "note")
    page.table(["label", "variant", "family", "parameters"],
               [[labels[v["name"]], v["name"], v["family"], json.dumps(v["params"], separators=(", ", ": "))]
                for v in d.variants.values()], tid="t-variants")

    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write(page.render())


def main(argv):
    signal.signal(signal.SIGINT, signal.SIG_DFL)   # stopped by tilebench: quietly
    if argv[:1] in (["chart"], ["check"]):         # one figure alone (report_chart.py)
        import report_chart
        try:
            report_chart.main(argv)
        except Exception as e:      # a bug: one line
            if os.environ.get("TILEBENCH_REPORT_DEBUG"):
                traceback.print_exc()
            die(f"the chart script failed: {type(e).__name__}: {e}", 1)
        return
    args = parse(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        die(f"matplotlib is missing for '{sys.executable}': install python3-matplotlib "
            "(scripts/setup.sh does), or name a python3 that has it in TILEBENCH_PYTHON", 2)
    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    import report_data
    try:
        build(args)
    except report_data.ReportError as e:
        die(str(e), e.code)
    except OSError as e:
        die(f"cannot write the report: {e}", 1)
    except Exception as e:      # a bug: one line (the traceback with TILEBENCH_REPORT_DEBUG=1)
        if os.environ.get("TILEBENCH_REPORT_DEBUG"):
            traceback.print_exc()
        tb = traceback.extract_tb(e.__traceback__)[-1]
        die(f"the report script failed: {type(e).__name__}: {e} ({os.path.basename(tb.filename)} line {tb.lineno})", 1)


if __name__ == "__main__":
    main(sys.argv[1:])
