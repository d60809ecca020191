#!/bin/bash
# gpu_problems.sh - validation covers the whole problem: alpha != 1, beta != 0 with C,
# each layout, padded leading dimensions, batch. The SIMT variants and cublaslt support
# every layout and must pass; mma_sync supports only tn and must decline the rest with a
# reason; on tn with padding, batch and beta it must pass.
set -u
. "$(dirname "$0")/gpu_common.sh"
shapes=128x96x64x3,200x136x72,1x256x40x2
for lay in tn nn nt tt; do
    db="$tmp/p-$lay.db"
    "$TB" sweep --filter cublaslt --filter 'simt_*' --filter 'mma_sync_bf16_128x128x32_s3*' \
        --shapes $shapes --layout $lay --pad 8 --alpha 0.5 --beta -0.75 --max-time 0.1 \
        --no-progress --quiet --db "$db" 2>"$tmp/err-$lay"
    rc=$?
    [ $rc = 0 ] && ok "problems-1.$lay" || bad "problems-1.$lay" "sweep exited $rc: $(tail -3 "$tmp/err-$lay")"
    "$TB" export --db "$db" --format json > "$tmp/e-$lay.json"
    $PY - "$tmp/e-$lay.json" "$lay" <<'PYEOF' && ok "problems-2.$lay" || bad "problems-2.$lay" "see above"
import json, sys
d = json.load(open(sys.argv[1])); lay = sys.argv[2]; fails = []
for r in d["results"]:
    n = r["variant"]["name"]; p = r["problem"]
    tag = f"{n} {p['m']}x{p['n']}x{p['k']}x{p['batch']} {lay}"
    if p["beta"] != -0.75 or p["alpha"] != 0.5: fails.append(f"{tag}: problem lost alpha/beta")
    if n.startswith("mma_sync") and lay != "tn":
        if r["status"] != "unsupported": fails.append(f"{tag}: want unsupported, got {r['status']}")
        continue
    if n.startswith("mma_sync") and r["status"] == "unsupported":
        continue   # k or pitch constraints (documented in its supports())
    if r["status"] != "ok" or r["disposition"] != "passed":
        fails.append(f"{tag}: {r['status']}/{r['disposition']} {r['rule']} {r['reason']}")
ran = [r for r in d["results"] if r["status"] == "ok"]
if len(ran) < 6: fails.append(f"only {len(ran)} measurements ran")
for f in fails: print("FAIL", f)
sys.exit(1 if fails else 0)
PYEOF
done
finish
