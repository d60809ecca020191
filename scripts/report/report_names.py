"""report_names.py - text from the database made safe and short: control characters shown
escaped (as the CLI does on a terminal), variant names abbreviated by one fixed table of short
spellings (the full name is always in the table under the plot), file names for figures.

Owns no I/O. The abbreviation, in order (a worked example:
'wgmma_bf16_128x256x64_c2x1_s4_cooperative_rasterm_sw16_tn' -> 'wgmma 128x256x64 c2x1 s4 coop rm sw16'):
  1. the default data type token '_bf16' and the default layout suffix '_tn' are dropped (the
     problem's types and layouts head every table);
  2. each token of SHORT is replaced by its short spelling (cooperative -> coop, ...);
  3. '_' becomes a space, so long labels can break;
  4. past MAX_LABEL characters the middle is cut to '...';
  5. two names that would read the same keep their full names.
"""
import re

MAX_LABEL = 52

# the short spellings, applied to whole '_'-separated tokens (first matching prefix)
SHORT = [
    ("mma_sync", "mma"),            # the family prefix, before the tokens are split
]
TOKENS = {
    "cooperative": "coop",
    "pingpong": "pp",
    "rasterm": "rm",
    "rastern": "rn",
    "rasterh": "rh",
    "tail-streamk": "streamK",
    "epilogue-conflict": "conflict",
}
LEGEND = ("labels drop the default data type (bf16) and layout (tn); "
          "coop = cooperative, pp = ping-pong, rm / rn / rh = raster along m / n / Hilbert order, "
          "swN = swizzle band of N tiles, cMxN = cluster, sN = stages, wN = warps, "
          "mma = mma_sync; the tables give every full name")

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(s):
    """s (any value) as text with every control character shown as \\xNN, one line always."""
    if s is None:
        return ""
    s = str(s)
    return _CONTROL.sub(lambda m: "\\x%02x" % ord(m.group(0)), s)


def _abbrev1(name):
    s = clean(name)
    for long, short in SHORT:
        if s.startswith(long):
            s = short + s[len(long):]
    ns = ""
    if ":" in s and s.index(":") < 16:               # a gate's namespace, base: / head:
        ns, s = s.split(":", 1)
        ns += ":"
    toks = s.split("_")
    if len(toks) > 1:
        toks = [t for i, t in enumerate(toks) if not (t == "bf16" and i > 0)]
        if len(toks) > 1 and toks[-1] == "tn":
            toks = toks[:-1]
        toks = [TOKENS.get(t, t) for t in toks]
    s = ns + " ".join(toks)
    if len(s) > MAX_LABEL:
        keep = MAX_LABEL - 3
        s = s[: keep - keep // 3] + "..." + s[len(s) - keep // 3:]
    return s


def abbreviations(names):
    """{full name: label} for every name: short where the short label is unambiguous."""
    first = {n: _abbrev1(n) for n in names}
    seen = {}
    for n, a in first.items():
        seen.setdefault(a, []).append(n)
    return {n: (a if len(seen[a]) == 1 else clean(n)) for n, a in first.items()}


def slug(s, fallback):
    """A file-name-safe lowercase form of s ([a-z0-9._-], at most 60), else fallback."""
    t = re.sub(r"[^a-z0-9._-]+", "-", str(s).lower()).strip("-.")
    return t[:60] if t and re.fullmatch(r"[a-z0-9][a-z0-9._-]*", t[:60]) else fallback
