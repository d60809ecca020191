#!/bin/bash
# submission_cli.sh - `tilebench export --format submission` (docs/submission.md): every run of
# the gate fixture validates against schemas/submission-v1.schema.json (python3-jsonschema), and a
# run with attention rows (issue 33) against schemas/submission-v2.schema.json (6.x: version 2,
# its shapes' token and fields; hostile attention shapes refused by the parser with one message),
# each median lies in its own interval, timing is null exactly for results not timed, the
# GPU's UUID is hashed and never written, a document that breaks the schema is refused by it
# (the check can fail); the plausibility check holds an FP8 rate to the FP8 peak (5.x). No GPU
# needed. Environment (set by CTest): TB, TB_BUILD, TB_SRC.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$TB_BUILD/tests/make_gate_fixture" g.db >/dev/null || { echo "FAIL submission-0: fixture"; exit 1; }
"$TB_BUILD/tests/make_fixture_db" f.db >/dev/null || { echo "FAIL submission-0: fixture"; exit 1; }
for r in 1 2 3; do "$TB" export --db g.db --run $r --format submission --output g$r.json || exit 1; done
"$TB" export --db f.db --format submission --output f.json || exit 1
"$TB_BUILD/tests/make_gate_fixture" --attention a.db >/dev/null || { echo "FAIL submission-0: fixture"; exit 1; }
"$TB" export --db a.db --format submission --output a.json || exit 1
/usr/bin/python3 - "$TB_SRC/schemas/submission-v1.schema.json" "$TB_SRC/schemas/submission-v2.schema.json" <<'PY'
import copy, hashlib, json, math, os, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
schema2 = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
V = jsonschema.Draft202012Validator(schema)
ok = bad = 0
def check(id, cond, why):
    global ok, bad
    if cond: print(f"ok   {id}"); ok += 1
    else: print(f"FAIL {id}: {why}"); bad += 1
docs = {n: json.load(open(n + ".json")) for n in ("g1", "g2", "g3", "f")}
for n, d in docs.items():
    errs = [e.message for e in V.iter_errors(d)]
    check(f"submission-1.1 {n}", not errs, errs[:3])
    timed = [r for r in d["results"] if r["timing"] is not None]
    check(f"submission-1.2 {n}", all(r["timing"]["median_lo_ms"] <= r["timing"]["median_ms"] <= r["timing"]["median_hi_ms"] for r in timed),
          "a median outside its interval")
    check(f"submission-1.3 {n}", all((r["timing"] is None) == (r["status"] != "ok" or r["validation"]["disposition"] != "passed") for r in d["results"]),
          "timing null where timed or present where not")
uuid = "GPU-f1f1f1f1-0000-0000-0000-000000000000"
f = docs["f"]
check("submission-2.1", f["environment"]["gpu_uuid_sha256"] == hashlib.sha256(("tilebench-submission-v1:" + uuid).encode()).hexdigest(),
      "the UUID's hash is not SHA-256(salt + UUID)")
check("submission-2.2", uuid not in open("f.json").read() and "hostname" not in open("f.json").read(), "the UUID or the host name was written")
names = [r["variant"]["name"] for r in docs["g3"]["results"]]
check("submission-2.3", "head:slow5" in names and "base:slow5" in names, f"namespaces lost: {names[:4]}")
# the schema can fail: each of these breaks it
broken = []
for mutate in (lambda d: d.pop("environment"), lambda d: d.update(version=2),
               lambda d: d["results"][0]["shape"].update(m=0), lambda d: d["results"][0].update(extra=1),
               lambda d: d["results"][0]["variant"].update(name="bad name;drop"),
               lambda d: d["results"][0]["timing"].update(median_ms=-1.0)):
    x = copy.deepcopy(docs["g1"]); mutate(x); broken.append(V.is_valid(x))
check("submission-3.1", not any(broken), f"a broken document validated: {broken}")
# the C parser the server will share agrees: it reads every document, and refuses each broken
# one naming the field by its path
import subprocess
parse = os.environ["TB_BUILD"] + "/tests/parse_submission"
for n in docs:
    r = subprocess.run([parse, n + ".json"], capture_output=True, text=True)
    check(f"submission-4.1 {n}", r.returncode == 0 and r.stdout.startswith("ok "), r.stdout)
cases = [("environment missing", lambda d: d.pop("environment"), "document.environment: missing"),
         ("version 3", lambda d: d.update(version=3), "document.version: out of range"),
         ("m = 0", lambda d: d["results"][0]["shape"].update(m=0), "results[0].shape.m: out of range"),
         ("an extra member", lambda d: d["results"][1].update(extra=1), "results[1].extra: unknown member"),
         ("a bad name", lambda d: d["results"][0]["variant"].update(name="bad name;drop"), "results[0].variant.name: not a variant name"),
         ("a negative median", lambda d: d["results"][0]["timing"].update(median_ms=-1.0), "results[0].timing.median_ms: out of range"),
         ("a median outside its interval", lambda d: d["results"][0]["timing"].update(median_ms=1e6), "outside its own interval"),
         ("timing on an invalid result", lambda d: d["results"][3].update(timing=d["results"][0]["timing"]), "results[3].timing: present for a result that was not timed"),
         ("a NaN", None, "document: not JSON")]
for what, mutate, want in cases:
    if mutate:
        x = copy.deepcopy(docs["g2"]); mutate(x); text = json.dumps(x)
    else:
        text = open("g2.json").read().replace('"median_ms":\t0.', '"median_ms":\tNaN, "x": 0.', 1)
    r = subprocess.run([parse, "-"], input=text, capture_output=True, text=True)
    check(f"submission-4.2 {what}", r.returncode == 1 and want in r.stdout, r.stdout.strip())
# the leaderboard's plausibility check reads each result's dtypes (issue 23): an FP8 (E4M3 A and
# B) rate is held to the FP8 peak, twice BF16's on sm_90; an H100 SXM, 132 SMs at 1830 MHz:
# BF16 989.4, FP8 1978.9 TFLOP/s
def fp8_doc(tflops, dtypes="e4m3,e4m3,bf16,bf16,f32"):
    x = copy.deepcopy(docs["g2"])
    x["environment"].update(compute_capability="9.0", sm_count=132)
    r = next(r for r in x["results"] if r["timing"] is not None)
    r["shape"].update(m=8192, n=8192, k=8192, batch=1, layouts="tn", dtypes=dtypes)
    ms = 2.0 * 8192 ** 3 / (tflops * 1e12) * 1e3
    r["timing"].update(median_ms=ms, median_lo_ms=ms * 0.999, median_hi_ms=ms * 1.001, sm_clock_mhz=1830)
    x["results"] = [r]
    return json.dumps(x)
def plausible(text):
    return subprocess.run([parse, "--plausible", "-"], input=text, capture_output=True, text=True)
r = plausible(fp8_doc(1300))
check("submission-5.1 FP8 at 1300 TFLOP/s on an H100 (under its FP8 peak): accepted",
      r.returncode == 0 and r.stdout.startswith("ok 1 results"), r.stdout.strip())
r = plausible(fp8_doc(1300, "bf16,bf16,bf16,bf16,f32"))
check("submission-5.2 the same rate as BF16: above the BF16 peak, refused",
      r.returncode == 1 and "above the GPU's dense BF16 peak of 989.4 TFLOP/s at the 1830 MHz" in r.stdout, r.stdout.strip())
r = plausible(fp8_doc(2100))
check("submission-5.3 FP8 at 2100 TFLOP/s: above the FP8 peak, refused",
      r.returncode == 1 and "results[0]: 2100.0 TFLOP/s" in r.stdout
      and "above the GPU's dense FP8 peak of 1978.9 TFLOP/s at the 1830 MHz" in r.stdout, r.stdout.strip())
x = json.loads(fp8_doc(1300)); x["environment"]["compute_capability"] = "8.0"; x["environment"]["sm_count"] = 108
x["results"][0]["timing"]["sm_clock_mhz"] = 1410
r = plausible(json.dumps(x))
check("submission-5.4 FP8 on an A100 (no FP8 tensor cores): held to its BF16 peak, refused",
      r.returncode == 1 and "above the GPU's dense BF16 peak of 311.9 TFLOP/s" in r.stdout
      and "no FP8 tensor cores" in r.stdout, r.stdout.strip())
# 6.x attention rows (issue 33): a run that has them is written as version 2 (its GEMM row as
# in version 1), validates against the v2 schema and not v1, and the parser reads it
jsonschema.Draft202012Validator.check_schema(schema2)
V2 = jsonschema.Draft202012Validator(schema2)
a = json.load(open("a.json"))
att = [r for r in a["results"] if r["shape"].get("op") == "attention_fwd"]
check("submission-6.1 version 2, three attention rows and a GEMM row",
      a["version"] == 2 and len(att) == 3 and len(a["results"]) == 4 and docs["g1"]["version"] == 1, (a["version"], len(att)))
check("submission-6.2 the attention row: op, token, fields, bhsd, dtypes, label",
      att[0]["shape"] == {"op": "attention_fwd", "token": "4x32x4096x4096x128:causal:hkv=8", "batch": 4, "heads": 32,
                          "heads_kv": 8, "seq_q": 4096, "seq_k": 4096, "head_dim": 128, "causal": True,
                          "scale": 1 / math.sqrt(128), "layouts": "bhsd", "dtypes": "bf16,bf16,bf16,bf16,f32",
                          "label": "llama3-8b.s4k.causal"}, att[0]["shape"])
gemm = [r for r in a["results"] if "op" not in r["shape"]]
check("submission-6.3 the GEMM row of that run is a version-1 shape",
      len(gemm) == 1 and set(gemm[0]["shape"]) == {"m", "n", "k", "batch", "layouts", "dtypes"}, gemm)
errs = [e.message for e in V2.iter_errors(a)]
check("submission-6.4 a.json validates against the v2 schema, not v1", not errs and not V.is_valid(a), errs[:3])
errs = [e.message for e in V2.iter_errors(dict(docs["g1"], version=2))]
check("submission-6.5 a v1 document's grammar is v2's (version aside)", not errs, errs[:3])
broken = []
for mutate in (lambda s: s.update(heads_kv=0), lambda s: s.update(layouts="tn"), lambda s: s.update(m=4),
               lambda s: s.update(causal=1), lambda s: s.pop("token")):
    x = copy.deepcopy(a); mutate(x["results"][0]["shape"]); broken.append(V2.is_valid(x))
check("submission-6.6 the v2 schema refuses broken attention shapes", not any(broken), broken)
r = subprocess.run([parse, "a.json"], capture_output=True, text=True)
check("submission-6.7 the parser reads it", r.returncode == 0 and r.stdout.startswith("ok 4 results"), r.stdout)
def shape0(**kw):
    x = copy.deepcopy(a); x["results"][0]["shape"].update(kw)
    for k in [k for k, v in kw.items() if v is None]: x["results"][0]["shape"].pop(k)
    return x
hostile = [
    ("a token that disagrees with its fields (causal)", shape0(token="4x32x4096x4096x128:hkv=8"),
     "results[0].shape.token: disagrees with the shape's fields, which say 4x32x4096x4096x128:causal:hkv=8"),
    ("a token that disagrees with its fields (heads_kv)", shape0(heads_kv=4),
     "results[0].shape.token: disagrees with the shape's fields, which say 4x32x4096x4096x128:causal:hkv=4"),
    ("a token not in canonical form", shape0(token="4x32x4096x4096x128:hkv=8:causal"),
     "results[0].shape.token: disagrees with the shape's fields"),
    ("hkv not dividing heads", shape0(token="4x32x4096x4096x128:causal:hkv=3", heads_kv=3),
     "results[0].shape.token: attention shape '4x32x4096x4096x128:causal:hkv=3': hkv=3 does not divide the 32 query heads"),
    ("heads_kv above heads", shape0(token="4x32x4096x4096x128:causal:hkv=64", heads_kv=64),
     "hkv=64 does not divide the 32 query heads"),
    ("an absurd sequence", shape0(seq_q=1 << 21), "results[0].shape.seq_q: out of range"),
    ("an absurd head_dim", shape0(head_dim=4096), "results[0].shape.head_dim: out of range"),
    ("a tensor too large", shape0(token="65536x1024x1048576x1048576x512", batch=65536, heads=1024, heads_kv=1024,
                                 seq_q=1 << 20, seq_k=1 << 20, head_dim=512, causal=False),
     "is too large (more than 2^36 elements in one tensor)"),
    ("causal with Sq > Sk", shape0(token="4x32x8192x4096x128:causal:hkv=8", seq_q=8192),
     "causal needs Sq <= Sk"),
    ("a GEMM member in an attention shape", shape0(m=4096), "results[0].shape.m: unknown member"),
    ("a field missing", shape0(seq_k=None), "results[0].shape.seq_k: missing"),
    ("a GEMM layout", shape0(layouts="tn"), "results[0].shape.layouts: want bhsd or bshd"),
    ("four dtypes", shape0(dtypes="bf16,bf16,bf16,f32"), "results[0].shape.dtypes: want five of"),
    ("causal as a number", shape0(causal=1), "results[0].shape.causal: want true or false"),
    ("a scale of 0", shape0(scale=0), "results[0].shape.scale: out of range"),
    ("another op", shape0(op="gemm"), "results[0].shape.op: want \"attention_fwd\""),
    ("markup in the token", shape0(token="<b>4x32</b>"), "results[0].shape.token: not an attention token"),
    ("an attention row in a version 1 document", dict(a, version=1), "results[0].shape.op: an attention row needs version 2"),
    ("version 3", dict(a, version=3), "document.version: out of range"),
]
for what, x, want in hostile:
    r = subprocess.run([parse, "-"], input=json.dumps(x), capture_output=True, text=True)
    check(f"submission-6.8 refused: {what}", r.returncode == 1 and want in r.stdout and r.stdout.count("\n") == 1,
          r.stdout.strip())
# the plausibility check counts an attention row's FLOP (4*B*H*D*pairs), not 2*m*n*k: the H100's
# BF16 peak at 1830 MHz is 989.4 TFLOP/s; 4x32x4096x4096x128:causal:hkv=8 is 5.4989e11 FLOP
def attn_rate(tflops):
    x = copy.deepcopy(a)
    x["environment"].update(compute_capability="9.0", sm_count=132)
    ms = 549890031616 / (tflops * 1e12) * 1e3
    x["results"][0]["timing"].update(median_ms=ms, median_lo_ms=ms * 0.999, median_hi_ms=ms * 1.001, sm_clock_mhz=1830)
    x["results"] = x["results"][:1]
    return plausible(json.dumps(x))
r = attn_rate(600)
check("submission-6.9 attention at 600 TFLOP/s on an H100: accepted", r.returncode == 0, r.stdout.strip())
r = attn_rate(1100)
check("submission-6.10 attention at 1100 TFLOP/s: above the BF16 peak, refused",
      r.returncode == 1 and "results[0]: 1100.0 TFLOP/s" in r.stdout and "BF16 peak of 989.4" in r.stdout, r.stdout.strip())
print(f"{ok} passed, {bad} failed")
sys.exit(1 if bad else 0)
PY
