"""report_data.py - one run read from a tilebench SQLite file, read-only, for the report.

Owns every SQL statement of the report (constant text, bound values) and the figures derived
from a row: FLOPs, the compulsory DRAM traffic of a GEMM, % of the better cuBLAS, % of the
GPU's peak at the measured clock, the roofline ceilings (measured by `doctor --calibrate`, else
nominal) and the ranking `tilebench report` computed in C (report/rank.c, show's seed) and
handed over as JSON. Opens the file for reading only (connect(): query_only, or mode=ro and
immutable where it may not be written, as the store does), so it never writes, never migrates,
never leaves a -wal or -shm behind. docs/schema.md describes the tables.
"""
import json
import math
import os
import sqlite3
import urllib.parse


class ReportError(Exception):
    """A failure to report in one line; code 2: bad input or a missing requirement, 1: other."""

    def __init__(self, msg, code=2):
        super().__init__(msg)
        self.code = code


REFERENCES = ("cublaslt", "cublaslt-tuned")     # the heat map's 100 %: the better of the two

# Datasheet DRAM bandwidths (GB/s, 10^9 B/s), by a piece of the GPU's name, first match wins:
# the roofline's memory ceiling when the database holds no calibration of the run's GPU.
NOMINAL_DRAM_GBPS = [
    ("H100 80GB HBM3", 3350, "H100 SXM5 80 GB HBM3"),
    ("H100 NVL", 3900, "H100 NVL"),
    ("H100 PCIe", 2000, "H100 PCIe 80 GB"),
    ("H200", 4800, "H200 141 GB HBM3e"),
    ("A100-SXM4-80GB", 2039, "A100 SXM4 80 GB"),
    ("A100 80GB PCIe", 1935, "A100 PCIe 80 GB"),
    ("A100-SXM4-40GB", 1555, "A100 SXM4 40 GB"),
    ("A100-PCIE-40GB", 1555, "A100 PCIe 40 GB"),
]

DTYPE_BYTES = {"bf16": 2, "f16": 2, "fp16": 2, "f32": 4, "fp32": 4, "tf32": 4, "f64": 8,
               "fp64": 8, "f8": 1, "fp8": 1, "e4m3": 1, "e5m2": 1, "i8": 1, "s8": 1, "i32": 4}


def connect(path, tuples=False):
    """The database at path, for reading only; ReportError naming it when it cannot be opened.
    Rows are sqlite3.Row, or plain tuples with tuples=True (the scripts/ analyses use that).

    As the store opens for `show` (harness/store/store_schema.c): where this process may write
    the file and its folder, a read-write connection with PRAGMA query_only, because a mode=ro
    connection to a WAL file leaves the -wal and -shm it makes behind; elsewhere
    mode=ro&immutable=1 (no lock, nothing made), refusing a non-empty -wal it could not see."""
    if not os.path.isfile(path):
        raise ReportError(f"cannot open '{path}': no such file")
    full = os.path.abspath(path)
    uri = "file:" + urllib.parse.quote(full, safe="/")
    if os.access(full, os.W_OK) and os.access(os.path.dirname(full), os.W_OK):
        uri += "?mode=rw"
    else:
        wal = full + "-wal"
        if os.path.exists(wal) and os.path.getsize(wal) > 0:
            raise ReportError(f"cannot read '{path}': it may not be written here and its write-ahead "
                              f"log '{path}-wal' holds data only a writer can fold in")
        uri += "?mode=ro&immutable=1"
    try:
        conn = sqlite3.connect(uri, uri=True)
        conn.text_factory = lambda b: b.decode("utf-8", "backslashreplace")
        conn.row_factory = None if tuples else sqlite3.Row
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as e:
        raise ReportError(f"'{path}' is not a readable tilebench database: {e}")
    return conn


def _json(text):
    try:
        v = json.loads(text) if text else {}
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _num(v):
    """A finite float, or None."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def attn_pairs(sq, sk, causal):
    """The (query, key) pairs an attention forward computes: op_attention.c's tb_attn_pairs
    (the causal mask aligned to the bottom right; docs/method.md)."""
    if sq <= 0 or sk <= 0:
        return 0
    if not causal:
        return sq * sk
    return sq * sk - sq * (sq - 1) // 2 if sq <= sk else sk * (sk + 1) // 2


class Problem:
    def __init__(self, row):
        self.id = row["id"]
        self.op = row.get("op") or "gemm"
        self.m, self.n, self.k = row["m"], row["n"], row["k"]
        self.batch = row["batch"] if row["batch"] and row["batch"] > 0 else 1
        self.dtypes = row["dtypes"] or ""
        self.layouts = row["layouts"] or ""
        self.alpha, self.beta = row["alpha"], row["beta"]
        self.label = row["label"] or ""
        self.fp8 = self.dtypes.lower().startswith("e4m3,e4m3,")   # peak.c's tb_dtypes_fp8
        if self.op == "attention_fwd":   # its token and FLOPs, as op_attention.c writes them
            self.heads, self.heads_kv = row["heads"], row["heads_kv"]
            self.seq_q, self.seq_k, self.head_dim = row["seq_q"], row["seq_k"], row["head_dim"]
            self.causal = bool(row["causal"])
            self.softmax_scale = row.get("softmax_scale") or 0.0
            self.key = (f"{self.batch}x{self.heads}x{self.seq_q}x{self.seq_k}x{self.head_dim}" +
                        (":causal" if self.causal else "") +
                        (f":hkv={self.heads_kv}" if self.heads_kv != self.heads else ""))
            self.flops = 4.0 * self.batch * self.heads * self.head_dim * attn_pairs(
                self.seq_q, self.seq_k, self.causal)
        else:
            self.key = f"{self.m}x{self.n}x{self.k}" + (f"x{self.batch}" if self.batch > 1 else "")
            self.flops = 2.0 * self.m * self.n * self.k * self.batch

    def title(self):
        t = f"{self.key} {self.layouts}"
        if self.label:
            t += f" ({self.label})"
        return t

    def scalars(self):
        """The problem's scalars for a heading: a GEMM's alpha and beta where not 1 and 0, an
        attention problem's softmax scale (a GEMM's alpha and beta mean nothing there)."""
        if self.op == "attention_fwd":
            return f", scale {self.softmax_scale:g}" if self.softmax_scale else ""
        return f", alpha {self.alpha:g} beta {self.beta:g}" if self.alpha != 1 or self.beta else ""

    def compulsory_bytes(self):
        """A and B read once, D written once, C read once when beta != 0: the least DRAM
        traffic any GEMM kernel of this problem can have; for attention Q, K and V read once,
        O and the FP32 log-sum-exp written once (op_attention.c's tb_attn_bytes); None for an
        unknown data type."""
        t = [s.strip().lower() for s in self.dtypes.split(",")]
        if len(t) < 4 or any(x not in DTYPE_BYTES for x in t[:4]):
            return None
        a, b, c, d = (DTYPE_BYTES[x] for x in t[:4])
        if self.op == "attention_fwd":   # Q, K, V, O in the dtypes' order
            rows_q = self.batch * self.heads * self.seq_q
            rows_k = self.batch * self.heads_kv * self.seq_k
            return float(rows_q * self.head_dim * (a + d) + rows_k * self.head_dim * (b + c) +
                         rows_q * 4)
        per = self.m * self.k * a + self.k * self.n * b + self.m * self.n * d
        if self.beta:
            per += self.m * self.n * c
        return float(per * self.batch)


class Measurement:
    def __init__(self, row, variant, problem):
        self.id = row["id"]
        self.variant, self.problem = variant, problem
        self.status, self.disposition = row["status"], row["disposition"]
        self.reason, self.rule = row["reason"] or "", row["rule"] or ""
        self.method = row["method"] or ""
        self.n_samples = row["n_samples"] or 0
        self.median_ms, self.rse = _num(row["median_ms"]), _num(row["rse"])
        self.tflops, self.clock_mhz = _num(row["tflops"]), _num(row["clock_mhz"])
        if self.tflops is None and self.median_ms:       # not stored: FLOPs at the median time
            self.tflops = problem.flops / (self.median_ms * 1e-3) / 1e12
        self.extra = _json(row["extra_json"])
        self.rank = None          # from the C ranking: "1", "=1", "3", ...
        self.ratio = self.lo = self.hi = None
        self.tied = False
        self.dram_bytes = None    # read + write, when both counters were collected

    @property
    def ranked(self):
        return self.rank is not None

    def state(self):
        """What a table says of a measurement that was not ranked, in a few words."""
        if self.status != "ok":
            return self.status + (": " + self.reason if self.reason else "")
        if self.disposition == "incorrect":
            return f"invalid ({self.rule}): {self.reason}"
        if self.ranked:
            return f"{self.status}/{self.disposition}"
        return f"{self.status}/{self.disposition} (not timed)"

    def short_state(self):
        if self.status != "ok":
            return {"unsupported": "unsup.", "crashed": "crash", "timeout": "timeout",
                    "error": "error", "skipped": "skip"}.get(self.status, self.status[:7])
        if self.disposition == "incorrect":
            return "invalid"
        return "-"


class Data:
    """The run, its environment, variants, problems (in the run's order), measurements, the
    calibration of its GPU and the ranking; samples are read on demand (samples())."""

    def __init__(self, conn, run_id, ranks):
        self.conn = conn
        row = conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise ReportError(f"no run {run_id} in the database")
        self.run = dict(row)
        env = conn.execute("SELECT * FROM environment WHERE run_id = ?", (run_id,)).fetchone()
        self.env = dict(env) if env else None
        self.variants = {}
        for v in conn.execute("SELECT id, name, family, params_json FROM variants WHERE run_id = ? "
                              "ORDER BY id", (run_id,)):
            self.variants[v["id"]] = {"id": v["id"], "name": v["name"], "family": v["family"] or "",
                                      "params": _json(v["params_json"])}
        self.problems, self.meas = [], []
        probs = {}
        for r in conn.execute(
                "SELECT m.*, p.id AS p_id, p.op AS p_op, p.m AS p_m, p.n AS p_n, p.k AS p_k, "
                "p.batch, p.dtypes, p.layouts, p.alpha, p.beta, p.label, p.heads, p.heads_kv, "
                "p.seq_q, p.seq_k, p.head_dim, p.causal, p.softmax_scale FROM measurements AS m "
                "JOIN problems AS p ON p.id = m.problem_id WHERE m.run_id = ? "
                "ORDER BY m.problem_id, m.variant_id", (run_id,)):
            pid = r["p_id"]
            if pid not in probs:
                probs[pid] = Problem({"id": pid, "op": r["p_op"], "m": r["p_m"], "n": r["p_n"],
                                      "k": r["p_k"], "batch": r["batch"], "dtypes": r["dtypes"],
                                      "layouts": r["layouts"], "alpha": r["alpha"],
                                      "beta": r["beta"], "label": r["label"],
                                      "heads": r["heads"], "heads_kv": r["heads_kv"],
                                      "seq_q": r["seq_q"], "seq_k": r["seq_k"],
                                      "head_dim": r["head_dim"], "causal": r["causal"],
                                      "softmax_scale": r["softmax_scale"]})
                self.problems.append(probs[pid])
            self.meas.append(Measurement(r, self.variants[r["variant_id"]], probs[pid]))
        self.by_id = {m.id: m for m in self.meas}
        self._dram()
        self.order = {}          # problem id -> its ranked measurements, best first
        self.intervals = {}
        for s in ranks.get("shapes", []):
            pid = s.get("problem_id")
            self.intervals[pid] = bool(s.get("intervals"))
            self.order[pid] = []
            for r in s.get("ranked", []):
                m = self.by_id.get(r.get("measurement_id"))
                if m is None:
                    raise ReportError("the ranking names a measurement the run does not have", 1)
                m.rank = str(r.get("rank"))
                m.ratio, m.lo, m.hi = _num(r.get("ratio")), _num(r.get("lo")), _num(r.get("hi"))
                m.tied = bool(r.get("tied"))
                self.order[pid].append(m)
        self.fpc = _num(ranks.get("peak_flop_per_clk_sm"))
        self.fpc8 = _num(ranks.get("peak_flop_per_clk_sm_fp8"))   # E4M3 A and B (peak.c)
        self.calibration = self._calibration()

    def _dram(self):
        if not self.meas or not self._has_table("metrics"):
            return
        got = {}
        for r in self.conn.execute(
                "SELECT x.measurement_id AS id, x.name, x.value FROM metrics AS x "
                "JOIN measurements AS m ON m.id = x.measurement_id WHERE m.run_id = ? AND x.available = 1 "
                "AND x.name IN ('dram__bytes_read.sum', 'dram__bytes_write.sum')",
                (self.run["id"],)):
            v = _num(r["value"])
            if v is not None and v >= 0:
                got.setdefault(r["id"], {})[r["name"]] = v
        for mid, d in got.items():
            if len(d) == 2 and sum(d.values()) > 0 and mid in self.by_id:
                self.by_id[mid].dram_bytes = sum(d.values())

    def _has_table(self, name):
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                 (name,)).fetchone() is not None

    def _calibration(self):
        uuid = (self.env or {}).get("gpu_uuid")
        if not uuid or not self._has_table("calibration"):
            return None
        r = self.conn.execute("SELECT * FROM calibration WHERE gpu_uuid = ? COLLATE NOCASE "
                              "ORDER BY id DESC LIMIT 1", (uuid,)).fetchone()
        return dict(r) if r else None

    # ---- per shape ------------------------------------------------------------------------
    def at(self, problem):
        return [m for m in self.meas if m.problem.id == problem.id]

    def reference_ms(self, problem):
        """The median of the better of cublaslt and cublaslt-tuned at problem, and its name."""
        best = None
        for m in self.order.get(problem.id, []):
            if m.variant["name"] in REFERENCES and (best is None or m.median_ms < best.median_ms):
                best = m
        return (best.median_ms, best.variant["name"]) if best else (None, None)

    def pct_reference(self, m):
        ref, _ = self.reference_ms(m.problem)
        return 100.0 * ref / m.median_ms if ref and m.ranked and m.median_ms else None

    def peak_tflops_at(self, clock_mhz, fp8=False):
        """The dense tensor peak at clock_mhz, of FP8 (E4M3 A and B) when fp8, else BF16."""
        sms = (self.env or {}).get("sm_count")
        fpc = self.fpc8 if fp8 else self.fpc
        if not (fpc and sms and clock_mhz):
            return None
        return fpc * sms * clock_mhz * 1e6 / 1e12

    def samples(self, measurement_ids):
        """{measurement id: [(idx, ms, clock_mhz or None), ...]} in the order taken."""
        out = {i: [] for i in measurement_ids}
        for i in measurement_ids:
            for r in self.conn.execute("SELECT idx, ms, clock_mhz FROM samples WHERE measurement_id = ? "
                                       "ORDER BY idx", (i,)):
                out[i].append((r["idx"], _num(r["ms"]), _num(r["clock_mhz"])))
        return out

    # ---- the roofline's ceilings ----------------------------------------------------------
    def ceilings(self, fp8=False):
        """{'tflops', 'dram_gbps', 'source', 'tflops_how', 'dram_how'}: measured by doctor
        --calibrate when the database holds a calibration of the run's GPU, else nominal
        (peak.c's FLOP per clock per SM x SMs x the GPU's maximum SM clock; the datasheet DRAM
        bandwidth of NOMINAL_DRAM_GBPS); a value is None where unknown. fp8: the tensor
        ceiling of FP8 problems (the calibration's fp8_tflops, None in one made without it;
        nominal: the FP8 peak)."""
        c = self.calibration
        if c and _num(c.get("gemm_tflops")) and _num(c.get("dram_gbps")):
            when = (c.get("created_at") or "")[:10]
            key, shape, clock, what = (("fp8_tflops", "fp8_shape", "fp8_sm_clock_mhz", "E4M3") if fp8
                                       else ("gemm_tflops", "gemm_shape", "sm_clock_mhz", "BF16"))
            clk = _num(c.get(clock))
            tf = _num(c.get(key))
            return {"tflops": tf, "dram_gbps": _num(c["dram_gbps"]),
                    "source": "measured",
                    "tflops_how": (f"cuBLASLt {what} {c.get(shape) or ''}"
                                   + (f" at {clk:.0f} MHz" if clk else "")) if tf
                                  else "not in this calibration (made before FP8 was calibrated)",
                    "dram_how": "device-to-device copy",
                    "what": f"measured on this GPU by tilebench doctor --calibrate on {when} "
                            f"(calibration {c.get('id')})"}
        env = self.env or {}
        clk = env.get("sm_clock_max_mhz") if (env.get("sm_clock_max_mhz") or 0) > 0 else None
        tf = self.peak_tflops_at(clk, fp8) if clk else None
        name = env.get("gpu_name") or ""
        bw, bw_what = None, None
        for piece, gbps, what in NOMINAL_DRAM_GBPS:
            if piece.lower() in name.lower():
                bw, bw_what = float(gbps), what
                break
        return {"tflops": tf, "dram_gbps": bw, "source": "nominal",
                "tflops_how": (f"{self.fpc8 if fp8 else self.fpc:.0f} FLOP/clock/SM x {env.get('sm_count')} SMs x "
                               f"{clk} MHz (the maximum SM clock)") if tf else "unknown for this GPU",
                "dram_how": f"datasheet, {bw_what}" if bw else "unknown for this GPU",
                "what": "nominal (no tilebench doctor --calibrate of this GPU in the database)"}

    def intensity(self, m):
        """(FLOP per DRAM byte, 'measured' | 'compulsory') or (None, None)."""
        if m.dram_bytes:
            return m.problem.flops / m.dram_bytes, "measured"
        b = m.problem.compulsory_bytes()
        return (m.problem.flops / b, "compulsory") if b else (None, None)


def load(path, run_id, ranks_path):
    """Open path read-only and read run_id with the ranking at ranks_path."""
    try:
        with open(ranks_path, encoding="utf-8") as f:
            ranks = json.load(f)
    except (OSError, ValueError) as e:
        raise ReportError(f"cannot read the ranking '{ranks_path}': {e}", 1)
    conn = connect(path)
    try:
        return Data(conn, run_id, ranks)
    except sqlite3.Error as e:
        raise ReportError(f"cannot read '{path}': {e}")
