"""report_chart.py - one figure alone: the before/after chart of a gate or a compare, drawn from
the comparison tilebench wrote as JSON (`gate` / `compare` with --chart, harness/cli/verdicts.c
runs it), by the report's own figure code (report_figures.compare), so the chart a pull request
links to is the one the HTML report shows.

    python3 -B scripts/report chart --json FILE --output CHART.svg --title TEXT
    python3 -B scripts/report check          (exit 0 when matplotlib is importable, else 2)

The SVG is written beside CHART.svg and renamed onto it when whole. Exit: 0 written, 1 failed
while writing, 2 bad input or matplotlib missing, each with one line on standard error.
"""
import argparse
import json
import os
import sys


def die(msg, code):
    from report_names import clean
    print("tilebench: error: " + clean(msg), file=sys.stderr)
    sys.exit(code)


def need_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        die(f"matplotlib is missing for '{sys.executable}': install python3-matplotlib "
            "(scripts/setup.sh does), or name a python3 that has it in TILEBENCH_PYTHON", 2)


class Args(argparse.ArgumentParser):
    def error(self, message):
        die(f"report script: chart: {message}", 2)


def main(argv):
    if argv[:1] == ["check"]:
        need_matplotlib()
        return
    a = Args(prog="scripts/report chart", add_help=False)
    a.add_argument("--json", required=True)
    a.add_argument("--output", required=True)
    a.add_argument("--title", default="head against base")
    args = a.parse_args(argv[1:] if argv[:1] == ["chart"] else argv)
    need_matplotlib()
    try:
        with open(args.json, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        die(f"cannot read the comparison '{args.json}': {e}", 2)
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        die(f"'{args.json}' is not a comparison (no rows)", 2)
    import logging
    import warnings
    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    import report_figures as F
    F.setup()
    out = args.output
    tmp = os.path.join(os.path.dirname(out) or ".", f".{os.path.basename(out)}.{os.getpid()}.tmp.svg")
    try:
        fig = F.compare(doc, {}, tmp, None, None, what=args.title)
        if fig.file is None:     # nothing timed on both sides: say so in the picture itself
            import matplotlib.pyplot as plt
            p, ax = plt.subplots(figsize=(6.4, 1.0))
            ax.axis("off")
            ax.text(0, 0.5, f"{fig.title}: {fig.note}", va="center", fontsize=9)
            F.save(p, tmp)
        os.replace(tmp, out)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        die(f"cannot write the chart '{out}': {e}", 1)
