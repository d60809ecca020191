#!/bin/bash
# gpu_attention.sh - attention forward (issue 33): `sweep` measures attention shapes with the
# naive floor (variants/attn_naive) and the default point of the FlashAttention-2-style family
# (variants/attn_fa2, attn_fa2_bf16_128x64_s2_w4): ok and passed on plain, causal (Sq = Sk and
# Sq < Sk), grouped-query and multi-query shapes, head dims 64, 128 and 256, a decode row, odd
# lengths; TFLOP/s from the op table; the GEMM variants declined by the host ("computes GEMM
# only" or similar: only unsupported is asserted) and both attention variants declined on a
# GEMM shape. attn_fa2's default point (32 rows a warp) declines head dim 256, and only that.
# BSHD and a softmax scale given on the command line (--attn-layout, --softmax-scale), both
# variants.
set -u
. "$(dirname "$0")/gpu_common.sh"
db="$tmp/attn.db"
shapes=1x8x512x512x64,1x8x512x512x64:causal,2x4x77x131x128,2x4x64x200x128:causal
shapes=$shapes,1x8x256x256x64:hkv=2,1x4x128x128x256:causal:hkv=1,2x8x1x1000x128:causal:hkv=4
"$TB" sweep --variants "$TB_VARIANTS" --filter 'attn_naive*' --filter 'attn_fa2*' --filter 'simt_naive*' \
    --shapes "$shapes,256x256x256" --max-time 0.2 --no-energy --no-progress --db "$db" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
[ $rc = 0 ] && ok attn-1.1 || bad attn-1.1 "sweep exited $rc"
"$TB" export --db "$db" --format json > "$tmp/e.json" || bad attn-1.2 "export failed"
$PY - "$tmp/e.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
fails = []
seen = {"attn_naive": 0, "attn_fa2": 0}
for r in d["results"]:
    p, name = r["problem"], r["variant"]["name"]
    att = p.get("op") == "attention_fwd"
    tag = f'{name} {p.get("shape")}'
    fam = next((f for f in seen if name.startswith(f + "_")), None)
    if fam:
        dim = p.get("head_dim") if att else 0
        if not att:
            if r["status"] != "unsupported":
                fails.append(f"attn-2.3 {tag}: a GEMM shape not declined: {r['status']}")
        elif fam == "attn_fa2" and dim == 256:
            # the default point has 32 rows a warp: head dim 256 is declined, with a reason
            if r["status"] != "unsupported" or "256" not in (r.get("reason") or ""):
                fails.append(f"attn-2.5 {tag}: head dim 256 not declined: {r['status']} "
                             f"{r.get('reason')!r}")
        else:
            seen[fam] += 1
            if r["status"] != "ok" or r["disposition"] != "passed":
                fails.append(f"attn-2.1 {tag}: {r['status']}/{r['disposition']} rule "
                             f"{r.get('rule')!r} {r['reason']!r}")
            elif not (r.get("tflops") or 0) > 0:
                fails.append(f"attn-2.2 {tag}: no TFLOP/s ({r.get('tflops')})")
            else:
                print(f"  {tag}: {r['tflops']:.3g} TFLOP/s")
    elif att and r["status"] != "unsupported":
        fails.append(f"attn-2.4 {tag}: a GEMM variant not declined on attention: {r['status']}")
if seen["attn_naive"] != 7: fails.append(f"attn-2.0 attn_naive measured {seen['attn_naive']} attention shapes, want 7")
if seen["attn_fa2"] != 6: fails.append(f"attn-2.0 attn_fa2 measured {seen['attn_fa2']} attention shapes, want 6")
for f in fails: print("FAIL", f)
sys.exit(1 if fails else 0)
PYEOF
[ $? = 0 ] && ok attn-2 || bad attn-2 "see above"
# show lists the attention rows (its own block)
"$TB" show --db "$db" >"$tmp/show" 2>&1 && grep -q "attn_naive_bf16" "$tmp/show" \
    && grep -q "attn_fa2_bf16_128x64_s2_w4" "$tmp/show" \
    && ok attn-3.1 || bad attn-3.1 "$(cat "$tmp/show")"
# search still measures GEMM only: refused before anything runs (gate takes attention:
# gpu_gate.sh gate-gpu-5.1)
out=$("$TB" search --shapes 1x8x512x512x64 --db "$tmp/s.db" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "measures GEMM only" <<<"$out" && ok attn-4.1 || bad attn-4.1 "exit $rc: $out"
# BSHD and a softmax scale of the user's: stored, validated against the reference with them
"$TB" sweep --variants "$TB_VARIANTS" --filter 'attn_naive*' --filter 'attn_fa2*' \
    --shapes 2x4x77x131x128,1x8x256x256x64:causal:hkv=2 --attn-layout bshd --softmax-scale 0.3 --max-time 0.2 --no-energy --no-progress --quiet \
    --db "$tmp/b.db" > "$tmp/b.out" 2>&1; rc=$?
"$TB" export --db "$tmp/b.db" --format json > "$tmp/b.json" 2>/dev/null
[ $rc = 0 ] && $PY - "$tmp/b.json" <<'PYEOF' && ok attn-5.1 || bad attn-5.1 "exit $rc: $(tail -5 "$tmp/b.out")"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["problem"].get("op") == "attention_fwd"]
print([(r["problem"]["shape"], r["problem"].get("layouts"), r["problem"].get("scale"), r["status"], r["disposition"]) for r in rows])
assert len(rows) == 4, len(rows)   # attn_naive and attn_fa2's default point, two shapes each
for r in rows:
    p = r["problem"]
    assert r["status"] == "ok" and r["disposition"] == "passed", r
    assert "bshd" in json.dumps(p) and abs(float(p.get("scale", p.get("softmax_scale", 0))) - 0.3) < 1e-12, p
PYEOF
# the attention zoo (tests/zoo/README.md, "Attention members"): each caught by the rule and in
# the trial the table names, and passing where the table says it must
"$TB" sweep --variants "$TB_ZOO" --filter 'zoo_attn_*' --shapes "$shapes" --max-time 0.1 --no-energy \
    --no-progress --quiet --db "$tmp/z.db" > "$tmp/z.out" 2>&1; rc=$?
"$TB" export --db "$tmp/z.db" --format json > "$tmp/z.json" 2>/dev/null
[ $rc = 0 ] && $PY - "$tmp/z.json" <<'PYEOF' && ok attn-6 || bad attn-6 "exit $rc: $(tail -3 "$tmp/z.out")"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
fails, seen = [], {}
def want(member, p):
    causal, h, hkv, sk = p.get("causal"), p["heads"], p["heads_kv"], p["seq_k"]
    if member == "zoo_attn_ok": return None
    if member == "zoo_attn_no_max": return ("nonfinite", 2)
    # one key more for every row but the last: none on a decode row (seq_q 1)
    if member == "zoo_attn_mask_plus1": return ("elementwise", 1) if causal and p["seq_q"] > 1 else None
    if member == "zoo_attn_wrong_scale": return ("elementwise", 1) if sk > 1 else ("lse", 1)
    if member == "zoo_attn_no_lse": return ("lse-nonfinite", 1)
    if member == "zoo_attn_gqa_mod": return ("elementwise", 1) if 1 < hkv < h else None
    raise KeyError(member)
for r in rows:
    name, p = r["variant"]["name"], r["problem"]
    seen[name] = seen.get(name, 0) + 1
    w = want(name, p)
    got = (r["status"], r["disposition"], r.get("rule"), (r.get("reason") or "")[:8])
    if w is None:
        if r["status"] != "ok" or r["disposition"] != "passed":
            fails.append(f"{name} {p['shape']}: want passed, got {got} {r.get('reason')!r}")
    elif not (r["status"] == "ok" and r["disposition"] == "incorrect" and r.get("rule") == w[0]
              and (r.get("reason") or "").startswith(f"trial {w[1]}:")):
        fails.append(f"{name} {p['shape']}: want incorrect/{w[0]} in trial {w[1]}, got {got} {r.get('reason')!r}")
print("members x shapes:", seen)
if sorted(seen) != sorted(["zoo_attn_ok", "zoo_attn_no_max", "zoo_attn_mask_plus1", "zoo_attn_wrong_scale",
                           "zoo_attn_no_lse", "zoo_attn_gqa_mod"]) or any(n != 7 for n in seen.values()):
    fails.append(f"want the six members on 7 shapes each: {seen}")
for f in fails: print("FAIL", f)
sys.exit(1 if fails else 0)
PYEOF
# docs/writing-a-variant.md's attention example, built outside the tree as the page says
# (tests/doc_example.sh, with this machine's nvcc) and swept: it passes the rule
src=${TB_SRC:-$PWD}
if [ ! -r "$src/docs/writing-a-variant.md" ]; then
    bad attn-7 "no docs/writing-a-variant.md under '$src' (set TB_SRC to the checkout)"
else
    mkdir -p "$tmp/ex"
    DOC_EXAMPLE_KEEP="$tmp/ex" sh "$src/tests/doc_example.sh" > "$tmp/ex.out" 2>&1; rc=$?
    "$TB" sweep --variants "$tmp/ex/my_attention.so" --shapes 1x8x512x512x64:causal,2x8x300x700x128:hkv=2,1x4x128x128x256 \
        --max-time 0.1 --no-energy --no-progress --quiet --db "$tmp/ex.db" > "$tmp/ex2.out" 2>&1; rc2=$?
    n=$("$TB" export --db "$tmp/ex.db" --format json 2>/dev/null | $PY -c "import json,sys; print(sum(r['status'] == 'ok' and r['disposition'] == 'passed' for r in json.load(sys.stdin)['results']))")
    [ $rc = 0 ] && [ $rc2 = 0 ] && [ "$n" = 3 ] && ok attn-7 \
        || bad attn-7 "built $rc, swept $rc2, $n of 3 passed: $(tail -3 "$tmp/ex.out") $(tail -3 "$tmp/ex2.out")"
fi
# ---- attn_hopper (issue 33, Hopper: TMA + wgmma, FlashAttention-3 style) -------------------
# Its default point lies in the default folder, the rest in lib/tilebench/variants-grid (first
# passed on an H100 in the sixteenth session). This check runs every attn_hopper point on the shapes
# above (head dims 64 and 128, causal Sq = Sk and Sq < Sk, grouped-query, multi-query, a decode
# row, odd lengths), then in BSHD with a softmax scale of 0.3, plus a 4k causal shape with
# several q tiles per head: ok and passed everywhere; head dim 256 declined with a reason naming
# 256. Only on compute capability 9.0 (sm_90a); skipped (not failed) elsewhere.
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)
GRID=${TB_VARIANTS_GRID:-$(dirname "$TB_VARIANTS")/variants-grid}
if [ "$cc" != 9.0 ]; then
    echo "skip attn-hop: attn_hopper needs compute capability 9.0 (found '$cc')"
else
    hv=(--variants "$GRID" --variants "$TB_VARIANTS")   # the grid's points and the default one
    npts=$("$TB" list "${hv[@]}" --filter 'attn_hopper*' 2>/dev/null | grep -c '^attn_hopper_')
    hshapes=$shapes,1x16x4096x4096x128:causal,1x4x1000x1000x64:causal:hkv=2
    "$TB" sweep "${hv[@]}" --filter 'attn_hopper*' --shapes "$hshapes" --max-time 0.2 \
        --no-energy --no-progress --quiet --db "$tmp/hop.db" > "$tmp/hop.out" 2>&1; rc=$?
    "$TB" sweep "${hv[@]}" --filter 'attn_hopper*' --shapes 2x4x77x131x128,1x8x256x256x64:causal:hkv=2 \
        --attn-layout bshd --softmax-scale 0.3 --max-time 0.2 --no-energy --no-progress --quiet \
        --db "$tmp/hopb.db" >> "$tmp/hop.out" 2>&1; rc2=$?
    "$TB" export --db "$tmp/hop.db" --format json > "$tmp/hop.json" 2>/dev/null
    "$TB" export --db "$tmp/hopb.db" --format json > "$tmp/hopb.json" 2>/dev/null
    [ $rc = 0 ] && [ $rc2 = 0 ] && [ "$npts" -ge 2 ] && $PY - "$tmp/hop.json" "$tmp/hopb.json" "$npts" <<'PYEOF' \
        && ok attn-hop.1 || bad attn-hop.1 "exit $rc/$rc2, $npts points: $(tail -5 "$tmp/hop.out")"
import json, sys
rows = [r for f in sys.argv[1:3] for r in json.load(open(f))["results"]
        if r["variant"]["name"].startswith("attn_hopper_")]
npts = int(sys.argv[3])
fails, passed = [], 0
for r in rows:
    p = r["problem"]
    tag = f'{r["variant"]["name"]} {p.get("shape")} {p.get("layouts", "")}'
    if p.get("head_dim") == 256:
        if r["status"] != "unsupported" or "256" not in (r.get("reason") or ""):
            fails.append(f"{tag}: head dim 256 not declined: {r['status']} {r.get('reason')!r}")
    elif r["status"] != "ok" or r["disposition"] != "passed":
        fails.append(f"{tag}: {r['status']}/{r['disposition']} rule {r.get('rule')!r} {r.get('reason')!r}")
    else:
        passed += 1
        print(f"  {tag}: {r['tflops']:.3g} TFLOP/s")
# the first sweep's 6 shapes of head dim 64/128 (its 7th is 256) + 2 more, and 2 BSHD shapes
if passed != npts * 10: fails.append(f"{passed} passed rows, want {npts * 10} ({npts} points x 10 shapes)")
for f in fails: print("FAIL attn-hop", f)
sys.exit(1 if fails else 0)
PYEOF
fi
finish
