#!/bin/bash
# cli.sh - end-to-end tests of the tilebench CLI that need no GPU: every bad input gets one
# line naming it, exit 2 and nothing written; list/show/export/doctor work without a GPU.
# Environment (set by CTest): TB (the binary), TB_ZOO, TB_VARIANTS, TB_BUILD, TB_SRC.
set -u
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
has_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then has_gpu=1; fi

ok()   { echo "ok   $1"; pass=$((pass+1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail+1)); }
# run ID EXPECTED_RC NEEDLE CMD...: exit code and a needle in stdout+stderr
run() {
    local id=$1 want=$2 needle=$3; shift 3
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" != "$want" ]; then bad "$id" "exit $rc, want $want: $out"; return; fi
    if [ -n "$needle" ] && ! grep -qF -- "$needle" <<<"$out"; then bad "$id" "no '$needle' in: $out"; return; fi
    ok "$id"
}
# one line on stderr for a usage error
one_line() {
    local id=$1; shift
    local n; n=$("$@" 2>&1 >/dev/null | wc -l)
    [ "$n" = 1 ] && ok "$id" || bad "$id" "$n lines of error output"
}

run cli-1.1 0 "tilebench 0." "$TB" --version
run cli-1.2 0 "usage: tilebench" "$TB" --help
for c in list sweep show export doctor; do run "cli-1.3-$c" 0 "usage: tilebench $c" "$TB" $c --help; done
run cli-1.4 2 "unknown command 'frobnicate'" "$TB" frobnicate
one_line cli-1.5 "$TB" frobnicate
run cli-1.6 2 "usage: tilebench" "$TB"

db="$tmp/sub/t.db"
run cli-2.1 2 "'--bogus'" "$TB" sweep --bogus --db "$db"
one_line cli-2.2 "$TB" sweep --bogus --db "$db"
run cli-2.3 2 "malformed shape '12x3'" "$TB" sweep --shapes 12x3 --db "$db"
run cli-2.4 2 "shape '0x128x128' has a non-positive size" "$TB" sweep --shapes 0x128x128 --db "$db"
run cli-2.5 2 "shape '-5x8x8' has a non-positive size" "$TB" sweep --shapes=-5x8x8 --db "$db"
run cli-2.6 2 "unknown shape set 'nosuch'" "$TB" sweep --shapes nosuch --db "$db"
run cli-2.7 2 "no such variant path '/no/such/dir'" "$TB" sweep --variants /no/such/dir --shapes smoke --db "$db"
run cli-2.8 2 "invalid value 'abc' for --max-time" "$TB" sweep --max-time abc --db "$db"
run cli-2.9 2 "invalid value 'lognormal' for --init" "$TB" sweep --init lognormal --db "$db"
run cli-2.10 2 "unexpected argument 'extra'" "$TB" sweep extra --db "$db"
run cli-2.11 2 "--min-samples 50 is more than --max-samples 5" "$TB" sweep --min-samples 50 --max-samples 5 --db "$db"
run cli-2.15 2 "unknown stopping criterion 'bogus'" "$TB" sweep --stop bogus --db "$db"
run cli-2.16 2 "invalid value 'x' for stdrel:max-noise" "$TB" sweep --stop stdrel:max-noise=x --db "$db"
run cli-2.17 2 "invalid value 'fast' for --method" "$TB" sweep --method fast --db "$db"
run cli-2.18 2 "invalid value 'warm' for --l2" "$TB" sweep --l2 warm --db "$db"
run cli-2.19 2 "invalid value 'tx' for --layout" "$TB" sweep --layout tx --db "$db"
run cli-2.20 2 "invalid value 'helgrind' for --sanitize" "$TB" sweep --sanitize=helgrind --db "$db"
run cli-2.21 2 "invalid value '1' for --trials" "$TB" sweep --trials 1 --db "$db"
# attention shapes (issue 33): sweep measures them (gpu_attention); the GEMM-only options and
# the commands that measure GEMM only refuse them before anything runs or is written
run cli-2.23 2 "attention shapes: --metrics applies to GEMM only (issue 33)" "$TB" sweep --shapes 1x32x4096x4096x128:causal:hkv=8 --metrics banks --db "$db"
run cli-2.24 2 "attention shapes: --layout applies to GEMM only (issue 33)" "$TB" sweep --shapes smoke,attn --layout nn --db "$db"
run cli-2.28 2 "attention shapes: --dtype applies to GEMM only (issue 33)" "$TB" sweep --shapes attn --dtype e4m3 --db "$db"
one_line cli-2.25 "$TB" sweep --shapes attn --pad 8 --db "$db"
run cli-2.26 2 "attention shape '1x32x4096x4096x128:hkv=3': hkv=3 does not divide the 32 query heads" "$TB" sweep --shapes 1x32x4096x4096x128:hkv=3 --db "$db"
# gate takes attention shapes; against a baseline its control computes one operation
run cli-2.27 2 "--baseline with shapes of more than one operation: one control cannot cancel the clock on both" "$TB" gate --head "$tmp" --baseline "$tmp/none.json" --shapes 1x2x128x128x64,64x64x64 --db "$db"
run cli-2.30 2 "attention shapes: \`search\` measures GEMM only for now (issue 33)" "$TB" search --shapes 1x8x512x512x64:causal
if [ $has_gpu = 0 ]; then
    # without a GPU an attention sweep stops where a GEMM one does
    run cli-2.29 2 "sweep needs an NVIDIA GPU" "$TB" sweep --shapes 1x8x512x512x64,1x8x512x512x64:causal --db "$db"
fi
if [ $has_gpu = 0 ]; then
    run cli-2.12 2 "sweep needs an NVIDIA GPU" "$TB" sweep --shapes smoke --db "$db"
    one_line cli-2.13 "$TB" sweep --shapes smoke --db "$db"
fi
[ ! -e "$db" ] && [ ! -e "$tmp/sub" ] && ok cli-2.14 || bad cli-2.14 "a bad sweep wrote '$db'"

# list: the zoo's broken libraries are refused one line each, naming the file; the rest listed
out=$("$TB" list --variants "$TB_ZOO" 2>"$tmp/err"); rc=$?
[ $rc = 0 ] && ok cli-3.1 || bad cli-3.1 "list of the zoo exited $rc"
for pat in "zoo_abi_version.so.*ABI version 999" "zoo_struct_small.so.*struct_size 16" \
           "no entry symbol 'tilebench_variant_query' in '.*zoo_nosym.so'" \
           "zoo_undefined.so.*undefined symbol" "zoo_notelf.so" "zoo_null_name.so.*no name" \
           "zoo_badname.so.*does not match its parameters" "duplicate variant name 'zoo_dup'" \
           "duplicate variant name 'zoo_wrong'"; do
    grep -qE "refused: .*$pat" "$tmp/err" && ok "cli-3.2 [$pat]" || bad "cli-3.2" "no refusal matching '$pat' in: $(cat "$tmp/err")"
done
for v in zoo_crash zoo_hang zoo_illegal zoo_exit zoo_nosass; do
    grep -q "^$v " <<<"$out" && ok "cli-3.3 [$v]" || bad cli-3.3 "$v not listed"
done
run cli-3.4 0 "zoo_crash" "$TB" list --variants "$TB_ZOO" --filter 'zoo_cr*'
n=$("$TB" list --variants "$TB_ZOO" --filter 'zoo_cr*' 2>/dev/null | grep -c '^zoo_')
[ "$n" = 1 ] && ok cli-3.5 || bad cli-3.5 "--filter selected $n variants"
n=$("$TB" list --variants "$TB_ZOO" --filter 'zoo_*' --exclude 'zoo_[a-h]*' 2>/dev/null | grep -c '^zoo_')
m=$("$TB" list --variants "$TB_ZOO" 2>/dev/null | grep '^zoo_' | grep -vc '^zoo_[a-h]')
[ "$n" = "$m" ] && [ "$n" -gt 0 ] && ok cli-3.6 || bad cli-3.6 "--exclude kept $n, want $m"
run cli-3.7 2 "no variant matches the filters" "$TB" list --variants "$TB_ZOO" --filter 'nomatch*'
run cli-3.8 2 "no such variant path" "$TB" list --variants "$tmp/none.so"
run cli-3.9 2 "unknown format 'yaml'" "$TB" list --format yaml

# the shipped variants
out=$("$TB" list 2>&1); rc=$?
[ $rc = 0 ] && ok cli-4.1 || bad cli-4.1 "list exited $rc: $out"
for v in cublaslt simt_naive simt_tiled; do grep -q "^$v" <<<"$out" && ok "cli-4.2 [$v]" || bad cli-4.2 "no $v"; done
n=$(grep -c '^mma_sync_' <<<"$out")
[ "$n" -ge 6 ] && ok cli-4.3 || bad cli-4.3 "$n mma_sync points, want >= 6"
grep -qE '^ +[0-9a-f]{64}$' <<<"$out" && ok cli-4.4 || bad cli-4.4 "no SHA-256 column"
"$TB" list --format json > "$tmp/l.json" 2>/dev/null
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d)>=9 and all(len(x['sha256'])==64 for x in d)" "$tmp/l.json" \
    && ok cli-4.5 || bad cli-4.5 "list --format json is not the JSON expected"

# databases: missing, garbage, newer schema
run cli-5.1 2 "cannot open" "$TB" show --db "$tmp/none.db"
[ ! -e "$tmp/none.db" ] && ok cli-5.2 || bad cli-5.2 "show created a database"
head -c 4096 /dev/urandom > "$tmp/garbage.db"; cp "$tmp/garbage.db" "$tmp/garbage.orig"
run cli-5.3 2 "garbage.db" "$TB" show --db "$tmp/garbage.db"
run cli-5.4 2 "garbage.db" "$TB" export --format json --db "$tmp/garbage.db"
cmp -s "$tmp/garbage.db" "$tmp/garbage.orig" && [ ! -e "$tmp/garbage.db-wal" ] && ok cli-5.5 || bad cli-5.5 "garbage database touched"
/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table runs(id)'); c.execute('pragma user_version=99'); c.commit()" "$tmp/new.db"
run cli-5.6 2 "newer than this tilebench" "$TB" show --db "$tmp/new.db"
one_line cli-5.7 "$TB" show --db "$tmp/new.db"

# show and export on a fixture database (invented figures; see make_fixture_db.c)
"$TB_BUILD/tests/make_fixture_db" "$tmp/f.db" >/dev/null || bad cli-6.0 "fixture"
out=$("$TB" show --db "$tmp/f.db" 2>&1); rc=$?
[ $rc = 0 ] && ok cli-6.1 || bad cli-6.1 "show exited $rc"
grep -qE '^ +1 +fixture_fast ' <<<"$out" && grep -qE '^ +2 +cublaslt ' <<<"$out" && ok cli-6.2 || bad cli-6.2 "ranking wrong: $out"
grep -q "126.1%" <<<"$out" && ok cli-6.3 || bad cli-6.3 "no % of cublaslt (126.1%): $out"
grep -qE '^ +- +fixture_broken .*crashed: worker killed by signal 11' <<<"$out" && ok cli-6.4 || bad cli-6.4 "crashed row: $out"
grep -q "@1980MHz" <<<"$out" && ok cli-6.5 || bad cli-6.5 "no % of peak at the clock: $out"
run cli-6.6 2 "no run 99" "$TB" show --db "$tmp/f.db" --run 99
# where the time went: stored with a run (runs.phases_json), shown in its header; none, no line
! grep -q "^time:" <<<"$out" && ok cli-6.6b || bad cli-6.6b "a time line for a run without phases: $out"
/usr/bin/python3 -c "
import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
c.execute('UPDATE runs SET phases_json = ? WHERE id = (SELECT max(id) FROM runs)', ('{\"timing_s\":6.0,\"energy_s\":2.5,\"validation_s\":1.0,\"store_s\":0.01,\"total_s\":10.0}',)); c.commit()" "$tmp/f.db"
out2=$("$TB" show --db "$tmp/f.db" 2>&1)
grep -qx "time: 10.0 s: timing 6.0 s (60 %), energy 2.5 s (25 %), validation 1.0 s (10 %), other 0.5 s" <<<"$out2" \
    && ok cli-6.6c || bad cli-6.6c "the time line: $(grep time: <<<"$out2")"
"$TB" export --db "$tmp/f.db" --format json > "$tmp/e.json"
/usr/bin/python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); r=d['results']
assert len(r)==3, len(r)
ok=[x for x in r if x['status']=='ok']; assert len(ok)==2 and len(ok[0]['timing']['samples_ms'])==4
" "$tmp/e.json" && ok cli-6.7 || bad cli-6.7 "export json"
"$TB" export --db "$tmp/f.db" --format csv --output "$tmp/e.csv" && [ -s "$tmp/e.csv" ] && ok cli-6.8 || bad cli-6.8 "export csv to a file"
/usr/bin/python3 -c "
import csv,sys; rows=list(csv.DictReader(open(sys.argv[1]))); b=[x for x in rows if x['variant']=='fixture_broken'][0]
assert b['median_ms']=='' and b['tflops']=='' and b['status']=='crashed' and 'planted' in b['reason'], b
" "$tmp/e.csv" && ok cli-6.9 || bad cli-6.9 "csv crashed row"
out=$("$TB" show --db "$tmp/f.db" --metrics 2>&1)
grep -qE "bank_conflicts_pipe_lsu_mem_shared_op_st.sum +1.99e\+06" <<<"$out" && grep -q "unavailable  (fixture: another profiler" <<<"$out" \
    && ok cli-6.15 || bad cli-6.15 "show --metrics: $out"
"$TB" export --db "$tmp/f.db" --format json | /usr/bin/python3 -c "
import json,sys; r=[x for x in json.load(sys.stdin)['results'] if x['variant']['name']=='fixture_fast'][0]
m={x['name']:x for x in r['metrics']}; assert m['dram__bytes_read.sum']['available'] is False and m['dram__bytes_read.sum']['value'] is None
assert m['l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum']['value']==1990000" && ok cli-6.16 || bad cli-6.16 "metrics in the json export"
# derived figures (issue 8): the fixture's cublaslt row has DRAM counters and its GPU a calibration
out=$("$TB" show --db "$tmp/f.db" --metrics 2>&1)
grep -q "^roofline ceilings: DRAM 2500.0 GB/s .*doctor --calibrate at 2026-11-22T12:00:00Z (calibration 1), not datasheet numbers" <<<"$out" \
    && ok cli-6.17 || bad cli-6.17 "show --metrics names no measured ceilings: $out"
grep -q "derived: arithmetic intensity 256.0 FLOP/byte (8.4 MB of DRAM traffic), achieved DRAM bandwidth 826.5 GB/s" <<<"$out" \
    && grep -q "roofline position: 33.1% of the attainable 640.0 TFLOP/s (211.6 achieved), memory-bound" <<<"$out" \
    && grep -q "derived: none (no DRAM traffic: dram__bytes_read.sum and dram__bytes_write.sum were not collected)" <<<"$out" \
    && ok cli-6.18 || bad cli-6.18 "show --metrics derived figures: $out"
"$TB" export --db "$tmp/f.db" --format json | /usr/bin/python3 -c "
import json,sys; r={x['variant']['name']:x for x in json.load(sys.stdin)['results']}
d=r['cublaslt']['derived']; f=d['roofline']
assert d['arithmetic_intensity']==256 and abs(d['dram_gbps']-826.4638)<1e-3, d
assert f['bound']=='memory' and f['attainable_tflops']==640 and abs(f['position']-0.330586)<1e-5, f
assert f['ceilings']['calibration_id']==1 and 'not datasheet' in f['ceilings']['source'], f
assert r['fixture_fast']['derived']['arithmetic_intensity'] is None and r['fixture_broken']['derived'] is None
" && ok cli-6.19 || bad cli-6.19 "derived figures in the json export"
cp "$tmp/f.db" "$tmp/nocal.db"
/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('delete from calibration'); c.commit()" "$tmp/nocal.db"
out=$("$TB" show --db "$tmp/nocal.db" --metrics 2>&1)
grep -q "derived: arithmetic intensity 256.0 FLOP/byte .* 826.5 GB/s" <<<"$out" \
    && grep -q "roofline position: no calibration for this GPU: run tilebench doctor --calibrate" <<<"$out" \
    && ! grep -q "% of the attainable" <<<"$out" && ok cli-6.20 || bad cli-6.20 "show --metrics without a calibration: $out"
"$TB" export --db "$tmp/nocal.db" --format json | /usr/bin/python3 -c "
import json,sys; d=[x for x in json.load(sys.stdin)['results'] if x['variant']['name']=='cublaslt'][0]['derived']
assert d['roofline'] is None and 'no calibration for this GPU' in d['why_not'] and d['arithmetic_intensity']==256, d
" && ok cli-6.21 || bad cli-6.21 "json export without a calibration"
# a host-bound figure (issue 19): the blocking kernel timed out in kept samples, so the figure
# is the host's pace: show prints it marked, with the host's time of a launch, and never ranks
# it; export carries the mark (extra in JSON, columns in CSV)
cp "$tmp/f.db" "$tmp/hb.db"
/usr/bin/python3 -c "
import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
x = '{\"host_launch_ms\":2.0412,\"host_bound\":true,\"block_timeouts\":4,\"graph_reps\":62,\"reps_wanted\":400,\"host_reps_cap\":62,\"input_sets\":62,\"input_refreshes\":9,\"refresh_ms\":0.2}'
c.execute('UPDATE measurements SET extra_json = ? WHERE variant_id IN (SELECT id FROM variants WHERE name = \'fixture_fast\')', (x,))
c.execute('UPDATE measurements SET extra_json = ? WHERE variant_id IN (SELECT id FROM variants WHERE name = \'cublaslt\')', ('{\"host_launch_ms\":0.0041}',))
c.commit()" "$tmp/hb.db"
out=$("$TB" show --db "$tmp/hb.db" 2>&1)
grep -qE '^ +1 +cublaslt .* 0\.0041  ok/passed' <<<"$out" \
    && grep -qE '^ +- +fixture_fast +266\.8 +0\.0080 .* 2\.0412  ok/passed cold HOST-BOUND: the blocking kernel timed out in 4 of 4 samples' <<<"$out" \
    && ! grep -qE '^ +[=0-9]+ +fixture_fast' <<<"$out" && grep -qE ' host ms  status$' <<<"$out" \
    && ok cli-6.22 || bad cli-6.22 "host-bound row ranked or unmarked: $out"
out=$("$TB" show --db "$tmp/hb.db" --detail 2>&1)
grep -q "host: launch() takes 2.0412 ms on the host (median of a call); 62 launches a sample (cut from 400 by the host's time" <<<"$out" \
    && grep -q "inputs: 62 distinct sets a sample, new values before every sample: 9 refreshes" <<<"$out" \
    && ok cli-6.23 || bad cli-6.23 "show --detail: no host line: $out"
"$TB" export --db "$tmp/hb.db" --format csv | /usr/bin/python3 -c "
import csv,sys; r={x['variant']:x for x in csv.DictReader(sys.stdin)}
assert (r['fixture_fast']['host_bound'], r['fixture_fast']['host_launch_ms']) == ('true', '2.0412'), r['fixture_fast']
assert (r['cublaslt']['host_bound'], r['cublaslt']['host_launch_ms']) == ('false', '0.0041'), r['cublaslt']
assert (r['fixture_broken']['host_bound'], r['fixture_broken']['host_launch_ms']) == ('', ''), r['fixture_broken']
" && "$TB" export --db "$tmp/hb.db" --format json | /usr/bin/python3 -c "
import json,sys; r={x['variant']['name']:x for x in json.load(sys.stdin)['results']}
assert r['fixture_fast']['extra']['host_bound'] is True and 'host_bound' not in r['cublaslt']['extra']
" && ok cli-6.24 || bad cli-6.24 "export does not carry the host-bound mark"
run cli-2.22 2 "invalid value 'banks;rm' for --metrics" "$TB" sweep --metrics 'banks;rm' --db "$tmp/sub/t.db"
run cli-6.10 2 "unknown export format 'xml'" "$TB" export --db "$tmp/f.db" --format xml
run cli-6.11 2 "needs --format" "$TB" export --db "$tmp/f.db"
run cli-6.12 2 "cannot write" "$TB" export --db "$tmp/f.db" --format csv --output "$tmp/no/such/dir/x.csv"
run cli-6.13 2 "already complete" "$TB" sweep --db "$tmp/f.db" --resume 1
run cli-6.14 2 "--resume takes the run's own options" "$TB" sweep --db "$tmp/f.db" --resume 1 --shapes smoke

# doctor works anywhere
run cli-7.1 0 "tilebench" "$TB" doctor --db "$tmp/f.db"
if [ $has_gpu = 0 ]; then run cli-7.2 0 "no GPU" "$TB" doctor; fi
run cli-7.3 0 "--calibrate" "$TB" doctor --help
run cli-7.4 2 "invalid value 'GPU-1234' for --device" "$TB" doctor --device GPU-1234
# doctor --calibrate needs a GPU: one line, exit 2, and no database (nor its directory) made
if [ $has_gpu = 0 ]; then
    run cli-7.5 2 "doctor --calibrate needs an NVIDIA GPU" "$TB" doctor --calibrate --db "$tmp/cal/c.db"
    one_line cli-7.6 "$TB" doctor --calibrate --db "$tmp/cal/c.db"
    n=$("$TB" doctor --calibrate --db "$tmp/cal/c.db" 2>/dev/null | wc -l)
    [ "$n" = 0 ] && ok cli-7.7 || bad cli-7.7 "$n lines on stdout"
    [ ! -e "$tmp/cal" ] && ok cli-7.8 || bad cli-7.8 "a failed calibration made '$tmp/cal'"
    mkdir -p "$tmp/cwd"
    (cd "$tmp/cwd" && "$TB" doctor --calibrate --device GPU-0000 >/dev/null 2>&1); rc=$?
    [ $rc = 2 ] && [ -z "$(ls -A "$tmp/cwd")" ] && ok cli-7.9 || bad cli-7.9 "exit $rc; left: $(ls -A "$tmp/cwd")"
    cp "$tmp/f.db" "$tmp/keep.db"; cp "$tmp/f.db" "$tmp/keep.orig"
    "$TB" doctor --calibrate --db "$tmp/keep.db" >/dev/null 2>&1; rc=$?
    [ $rc = 2 ] && cmp -s "$tmp/keep.db" "$tmp/keep.orig" && [ ! -e "$tmp/keep.db-wal" ] \
        && ok cli-7.10 || bad cli-7.10 "exit $rc, or the database was touched"
fi
# doctor --calibrate's parent side against a scripted worker (TILEBENCH_WORKER): FAKE_MODE
# ok sends a calibration for the fixture's GPU, fatal fails after "ready", die exits silently
cat > "$tmp/fake_worker" <<'SHEOF'
#!/bin/bash
[ "$1" = calibrate ] || exit 2
read -r job; echo "$job" > "$FAKE_JOB"
u=GPU-f1f1f1f1-0000-0000-0000-000000000000
[ "$FAKE_MODE" = die ] && exit 3
echo '{"type":"ready","gpu_name":"fake GPU","gpu_uuid":"'$u'","device":0}' >&3
[ "$FAKE_MODE" = fatal ] && { echo '{"type":"fatal","error":"cublasLtMatmul failed: planted"}' >&3; exit 2; }
echo '{"type":"begin","phase":"copy"}' >&3
case "$FAKE_MODE" in   # the FP8 ceiling: measured (ok), skipped with its reason (nofp8), or left out (old)
ok) fp8='"fp8_tflops":1400.5,"fp8_shape":"8192x8192x8192","fp8_sm_clock_mhz":1755,' ;;
nofp8) fp8='"fp8_tflops":null,"fp8_shape":null,"fp8_sm_clock_mhz":null,"fp8_skipped":"compute capability 8.0 has no FP8 tensor cores",' ;;
*) fp8= ;;
esac
echo '{"type":"calibration","dram_gbps":3000.5,"copy_bytes":2147483648,"gemm_tflops":750.25,"gemm_shape":"8192x8192x8192","sm_clock_mhz":1980,'"$fp8"'"gpu_uuid":"'$u'","gpu_name":"fake GPU","method":"fake: scripted"}' >&3
echo '{"type":"done"}' >&3
SHEOF
chmod +x "$tmp/fake_worker"
export FAKE_JOB="$tmp/fake_job"
cp "$tmp/f.db" "$tmp/fc.db"
out=$(TILEBENCH_WORKER="$tmp/fake_worker" FAKE_MODE=ok "$TB" doctor --calibrate --device GPU-F1F1F1F1-0000-0000-0000-000000000000 --db "$tmp/fc.db" 2>&1); rc=$?
[ $rc = 0 ] && grep -qE "^dram +3000.5 GB/s" <<<"$out" && grep -qE "^tensor +750.2 TFLOP/s .*SM clock 1980 MHz" <<<"$out" \
    && grep -qE "^fp8 +1400.5 TFLOP/s +cuBLASLt E4M3 8192x8192x8192, .*SM clock 1755 MHz: 1.87 x BF16" <<<"$out" \
    && grep -qE "^stored +calibration 2 in $tmp/fc.db" <<<"$out" && ok cli-7.11 || bad cli-7.11 "exit $rc: $out"
grep -q '"device_uuid":"GPU-F1F1F1F1-0000-0000-0000-000000000000"' "$FAKE_JOB" && ok cli-7.12 || bad cli-7.12 "job: $(cat "$FAKE_JOB")"
out=$("$TB" show --db "$tmp/fc.db" --metrics 2>&1)
grep -q "(calibration 2), not datasheet" <<<"$out" && grep -q "roofline position: 28.2% of the attainable 750.2 TFLOP/s (211.6 achieved), compute-bound" <<<"$out" \
    && ok cli-7.13 || bad cli-7.13 "show does not use the newest calibration: $out"
# an FP8 problem (issue 23): the same measurement relabelled E4M3, placed under the FP8 ceiling
# (1400.5: memory-bound at 256 FLOP/byte, where the BF16 ceiling of 750.2 binds) with its
# compulsory traffic at one byte an A and B element
cp "$tmp/fc.db" "$tmp/fc8.db"
/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE problems SET dtypes='e4m3,e4m3,bf16,bf16,f32', scale_a=0.015625, scale_b=0.03125\"); c.commit()" "$tmp/fc8.db"
out=$("$TB" show --db "$tmp/fc8.db" --metrics 2>&1)
grep -q "; FP8 tensor 1400.5 TFLOP/s (cuBLASLt E4M3 8192x8192x8192 at 1755 MHz), the ceiling of e4m3 problems" <<<"$out" \
    && grep -qE "roofline position: [0-9.]+% of the attainable [0-9.]+ TFLOP/s under the FP8 ceiling \(211.6 achieved\), memory-bound .*ridge at 466.8 FLOP/byte" <<<"$out" \
    && grep -qE "compulsory: [0-9.]+ MB \(A 1, B 1, D 2 bytes an element\), so at most [0-9.]+ FLOP/byte" <<<"$out" \
    && ok cli-7.16 || bad cli-7.16 "show --metrics does not place an FP8 problem under the FP8 ceiling: $out"
"$TB" export --db "$tmp/fc8.db" --format json --output "$tmp/fc8.json" && /usr/bin/python3 - "$tmp/fc8.json" <<'PY' \
    && ok cli-7.17 || bad cli-7.17 "export: the FP8 ceiling"
import json, sys
d = [r["derived"] for r in json.load(open(sys.argv[1]))["results"] if r.get("derived") and r["derived"].get("roofline")]
assert d, "no roofline"
roof = d[0]["roofline"]
assert roof["tensor_ceiling"] == "fp8" and roof["bound"] == "memory", roof
assert roof["ceilings"]["fp8_tflops"] == 1400.5 and roof["ceilings"]["gemm_tflops"] == 750.25, roof
assert abs(roof["ridge_intensity"] - 1400.5 * 1000 / 3000.5) < 1e-6, roof
assert d[0]["compulsory_intensity"] > 0 and d[0]["compulsory_bytes"] > 0, d[0]
PY
# a GPU without FP8 tensor cores: the BF16 ceiling stored, the FP8 one NULL with the reason said;
# a record that says nothing of FP8 is refused (parent and worker ship together)
cp "$tmp/fc.db" "$tmp/fc9.db"
out=$(TILEBENCH_WORKER="$tmp/fake_worker" FAKE_MODE=nofp8 "$TB" doctor --calibrate --db "$tmp/fc9.db" 2>&1); rc=$?
[ $rc = 0 ] && grep -qE "^fp8 +not measured: compute capability 8.0 has no FP8 tensor cores" <<<"$out" \
    && [ "$(/usr/bin/python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM calibration WHERE id = 3 AND fp8_tflops IS NULL AND gemm_tflops = 750.25').fetchone()[0])" "$tmp/fc9.db")" = 1 ] \
    && ok cli-7.18 || bad cli-7.18 "exit $rc: $out"
/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE problems SET dtypes='e4m3,e4m3,bf16,bf16,f32', scale_a=0.015625, scale_b=0.03125\"); c.commit()" "$tmp/fc9.db"
out=$("$TB" show --db "$tmp/fc9.db" --metrics 2>&1)
grep -q "roofline position: none: calibration 3 has no FP8 tensor ceiling" <<<"$out" && ! grep -q "FP8 tensor [0-9]" <<<"$out" \
    && ok cli-7.19 || bad cli-7.19 "an FP8 problem under a calibration without an FP8 ceiling: $out"
out=$(TILEBENCH_WORKER="$tmp/fake_worker" FAKE_MODE=old "$TB" doctor --calibrate --db "$tmp/fc9.db" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "calibration failed: the calibration has no FP8 GEMM throughput" <<<"$out" \
    && ok cli-7.20 || bad cli-7.20 "exit $rc: $out"
cp "$tmp/fc.db" "$tmp/fc.orig"
for mode in fatal die; do
    out=$(TILEBENCH_WORKER="$tmp/fake_worker" FAKE_MODE=$mode "$TB" doctor --calibrate --db "$tmp/fc.db" 2>&1 >/dev/null); rc=$?
    [ $rc = 1 ] && grep -q "^tilebench: error: calibration failed: " <<<"$out" && [ "$(wc -l <<<"$out")" = 1 ] \
        && cmp -s "$tmp/fc.db" "$tmp/fc.orig" && ok "cli-7.14 [$mode]" || bad "cli-7.14 [$mode]" "exit $rc: $out"
done
out=$(TILEBENCH_WORKER="$tmp/no_such_worker" "$TB" doctor --calibrate --db "$tmp/nw/x.db" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "^tilebench: error: calibration failed: cannot run worker '.*no_such_worker'" <<<"$out" \
    && [ ! -e "$tmp/nw" ] && ok cli-7.15 || bad cli-7.15 "exit $rc: $out"

# a sweep starts one worker for the GPU, not two: the measuring worker is started before the
# variants are probed, its environment record is the GPU check, and the first shape's job goes
# to it (driver/early.h); one never given a job is gone when tilebench exits. A scripted
# worker: `probe` runs the real one, `measure` reports a fake GPU when started with --device,
# then fails the job
cat > "$tmp/early_worker" <<'SHEOF'
#!/bin/bash
echo "$*" >> "$FAKE_LOG"
[ "$1" = probe ] && exec "$REAL_WORKER" "$@"
[ "$1" = measure ] || exit 2
echo $$ >> "$FAKE_PIDS"
[ "$2" = --device ] && echo '{"type":"env","gpu_name":"fake GPU","gpu_uuid":"GPU-e0e0e0e0-0000-0000-0000-000000000000","cc_major":9,"cc_minor":0,"sm_count":132}' >&3
read -r job || { [ -n "$FAKE_LINGER" ] && exec sleep 30; exit 0; }
echo "$job" >> "$FAKE_JOB"
echo '{"type":"fatal","error":"planted: no measuring here"}' >&3
exit 2
SHEOF
chmod +x "$tmp/early_worker"
export REAL_WORKER="$(dirname "$TB")/tilebench-worker" FAKE_LOG="$tmp/early.log" FAKE_PIDS="$tmp/early.pids" FAKE_JOB="$tmp/early.job"
rm -f "$FAKE_LOG" "$FAKE_PIDS" "$FAKE_JOB"
out=$(TILEBENCH_WORKER="$tmp/early_worker" "$TB" sweep --variants "$TB_VARIANTS/cublaslt.so" --shapes 256x256x256 \
      --no-progress --quiet --db "$tmp/early.db" 2>&1); rc=$?
first=$(grep -m1 '^measure' "$FAKE_LOG")
[ "$first" = "measure --device 0" ] && ! grep -q '^env' "$FAKE_LOG" && grep -q '"m":256' "$FAKE_JOB" &&
    [ "$(head -1 "$FAKE_LOG" | cut -d' ' -f1)" = measure ] && ok cli-9.1 ||
    bad cli-9.1 "exit $rc, worker calls: $(tr '\n' ';' < "$FAKE_LOG") job: $(head -c 200 "$FAKE_JOB" 2>/dev/null) out: $out"
[ "$(/usr/bin/python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select gpu_name from environment").fetchone()[0])' "$tmp/early.db" 2>&1)" = "fake GPU" ] &&
    ok cli-9.2 || bad cli-9.2 "the early worker's environment record was not stored with the run"
rm -f "$FAKE_LOG" "$FAKE_PIDS"
# (this worker outlives its closed stdin: tilebench must stop it at exit, 5 s later)
out=$(FAKE_LINGER=1 TILEBENCH_WORKER="$tmp/early_worker" "$TB" sweep --variants "$TB_VARIANTS/cublaslt.so" --filter no_such_variant \
      --shapes 256x256x256 --no-progress --quiet --db "$tmp/early2.db" 2>&1); rc=$?
sleep 0.2
alive=""
for p in $(cat "$FAKE_PIDS" 2>/dev/null); do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
[ $rc != 0 ] && [ -s "$FAKE_PIDS" ] && [ -z "$alive" ] && grep -q "no variant matches" <<<"$out" && ok cli-9.3 ||
    bad cli-9.3 "exit $rc, early worker pids $(cat "$FAKE_PIDS" 2>/dev/null), still alive:$alive; $out"

# 6.25. history (issue 28): with two earlier complete runs of the same libraries on the same
# GPU model in the file (three fixture runs merged, their medians moved by +3 % and -1 %), show
# says how far a rerun moved beside the run's own intervals; --detail gives each variant's range
hd="$tmp/hist"; mkdir -p "$hd"
for i in 1 2 3; do "$TB_BUILD/tests/make_fixture_db" "$hd/f$i.db" > /dev/null; done
/usr/bin/python3 -c "
import sqlite3, sys
for f, k in ((sys.argv[1], 1.03), (sys.argv[2], 0.99)):
    c = sqlite3.connect(f); c.execute('UPDATE measurements SET median_ms = median_ms * ?', (k,)); c.commit()" "$hd/f1.db" "$hd/f2.db"
"$TB" merge "$hd/h.db" "$hd/f1.db" "$hd/f2.db" "$hd/f3.db" > /dev/null
out=$("$TB" show --db "$hd/h.db" 2>&1); det=$("$TB" show --db "$hd/h.db" --detail 2>&1); one=$("$TB" show --db "$hd/f3.db" --detail 2>&1)
grep -q "history: in this file's earlier runs on this GPU model the same libraries' medians on this shape moved by up to 4.0 % (cublaslt)" <<<"$out" \
    && grep -q "history: with 2 earlier complete runs of this file on fixture GPU the median ranged .* (spread 4.04 %" <<<"$det" \
    && ! grep -q "history" <<<"$one" && ok cli-6.25 || bad cli-6.25 "history not shown (or shown without history): $(grep history <<<"$out$det$one" | head -3)"

# 10. scale out without a GPU (issue 21): --plan-only records every item as planned; --shard I/N
# partitions the shapes so N jobs cover each exactly once; a planned run is measured by --resume
# (here by a scripted worker that answers every job with made-up results)
pl="$tmp/plan"; mkdir -p "$pl"
vs=(--variants "$TB_VARIANTS/cublaslt.so" --variants "$TB_VARIANTS/simt_naive.so")
out=$("$TB" sweep "${vs[@]}" --shapes square,llm,odd --plan-only --no-progress --db "$pl/all.db" 2>&1); rc=$?
items() { /usr/bin/python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for r in c.execute("SELECT v.name, p.m, p.n, p.k, p.batch, m.status FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN problems p ON p.id = m.problem_id"):
    print(*r)' "$1"; }
nall=$(items "$pl/all.db" | grep -c ' planned$')
nsh=$(/usr/bin/python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM problems").fetchone()[0])' "$pl/all.db")
[ $rc = 0 ] && [ "$nall" = $((2 * nsh)) ] && [ "$nsh" -gt 40 ] && grep -q "2 variants x $nsh shapes = $nall items" <<<"$out" \
    && [ "$(/usr/bin/python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("SELECT status FROM runs").fetchone()[0], c.execute("SELECT count(*) FROM environment").fetchone()[0])' "$pl/all.db")" = "planned 0" ] \
    && ok cli-10.1 || bad cli-10.1 "exit $rc, $nall planned items for $nsh shapes: $out"
"$TB" show --db "$pl/all.db" | grep -q ' planned: to be measured: tilebench sweep --resume 1' \
    && [ "$("$TB" export --db "$pl/all.db" --format json | /usr/bin/python3 -c 'import json,sys; print(sorted({r["status"] for r in json.load(sys.stdin)["results"]}))')" = "['planned']" ] \
    && ok cli-10.2 || bad cli-10.2 "show/export do not list the planned items"
for n in 1 4 7; do
    for i in $(seq 0 $((n - 1))); do
        "$TB" sweep "${vs[@]}" --shapes square,llm,odd --plan-only --shard $i/$n --no-progress --db "$pl/s$n-$i.db" 2>/dev/null || bad cli-10.3 "shard $i/$n exited $?"
    done
    got=$(for i in $(seq 0 $((n - 1))); do items "$pl/s$n-$i.db"; done | sort)
    [ -n "$got" ] && [ "$got" = "$(items "$pl/all.db" | sort)" ] && [ -z "$(uniq -d <<<"$got")" ] && ok "cli-10.3 ($n shards)" \
        || bad cli-10.3 "$n shards do not cover the plan exactly once: $(diff <(echo "$got") <(items "$pl/all.db" | sort) | head -3)"
done
# the shards merged: show --run all prints every shard's run, each shape once
"$TB" merge "$pl/m4.db" "$pl"/s4-*.db > /dev/null 2>&1
out=$("$TB" show --db "$pl/m4.db" --run all 2>&1); rc=$?
[ $rc = 0 ] && [ "$(grep -c '^run [0-9]' <<<"$out")" = 4 ] && [ "$(grep -c '^shape ' <<<"$out")" = "$nsh" ] \
    && ok cli-10.3b || bad cli-10.3b "show --run all of the merged shards: exit $rc, $(grep -c '^run [0-9]' <<<"$out") runs, $(grep -c '^shape ' <<<"$out") shapes of $nsh"
run cli-10.3c 2 "--run all prints the table; for --format json export each run" "$TB" show --db "$pl/m4.db" --run all --format json
run cli-10.3d 2 "run 1 of '$pl/all.db' is a plan, not a measurement: measure it with tilebench sweep" "$TB" submit --db "$pl/all.db" --server http://127.0.0.1:9 --dry-run
run cli-10.4 2 "invalid value '4/4' for --shard (I/N: 0 <= I < N <= 4096)" "$TB" sweep --plan-only --shard 4/4 --db "$pl/bad.db"
run cli-10.5 2 "invalid value 'x' for --shard" "$TB" sweep --plan-only --shard x --db "$pl/bad.db"
[ ! -e "$pl/bad.db" ] && ok cli-10.6 || bad cli-10.6 "a refused --shard created the database"
# a variant of another operation only is left out of the run, not planned on every shape:
# attn_naive (attention) in a GEMM plan; GEMM and attention shapes together keep both; a
# selection that computes none of the shapes' operations is one line and exit 2
ops=(--variants "$TB_VARIANTS/simt_naive.so" --variants "$TB_VARIANTS/attn_naive.so")
out=$("$TB" sweep "${ops[@]}" --shapes 256x256x256 --plan-only --no-progress --db "$pl/ops1.db" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(items "$pl/ops1.db" | cut -d' ' -f1 | sort -u)" = simt_naive_bf16_w8 ] \
    && ok cli-10.8 || bad cli-10.8 "exit $rc: $(items "$pl/ops1.db" | head -3) $out"
out=$("$TB" sweep "${ops[@]}" --shapes 256x256x256,1x8x512x512x64 --plan-only --no-progress --db "$pl/ops2.db" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(items "$pl/ops2.db" | cut -d' ' -f1 | sort -u | tr '\n' ' ')" = "attn_naive_bf16 simt_naive_bf16_w8 " ] \
    && ok cli-10.9 || bad cli-10.9 "exit $rc: $(items "$pl/ops2.db" | cut -d' ' -f1 | sort -u | tr '\n' ' ') $out"
run cli-10.10 2 "none of the 1 selected variants computes gemm, the shapes' operation" \
    "$TB" sweep "${ops[@]}" --filter 'attn_naive*' --shapes 256x256x256 --plan-only --no-progress --db "$pl/ops3.db"
# --attn-layout and --softmax-scale (issue 33): stored with the attention problem, refused
# for GEMM shapes alone and for bad values, and a plan's resume keeps them
out=$("$TB" sweep "${ops[@]}" --shapes 1x8x128x96x64:hkv=2 --attn-layout bshd --softmax-scale 0.25 --plan-only \
      --no-progress --db "$pl/bshd.db" 2>&1); rc=$?
[ $rc = 0 ] && /usr/bin/python3 - "$pl/bshd.db" <<'PYEOF' && ok cli-10.11 || bad cli-10.11 "exit $rc: $out"
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
got = c.execute("SELECT layouts, softmax_scale FROM problems WHERE op = 'attention_fwd'").fetchall()
o = json.loads(c.execute("SELECT options_json FROM runs").fetchone()[0])
print(got, o.get("attn_layout"), o.get("softmax_scale"))
sys.exit(0 if got == [("bshd", 0.25)] and o.get("attn_layout") == "bshd" and o.get("softmax_scale") == 0.25 else 1)
PYEOF
run cli-10.12 2 "--attn-layout applies to attention shapes only" "$TB" sweep --shapes 256x256x256 --attn-layout bshd --plan-only --db "$pl/bad2.db"
run cli-10.13 2 "--softmax-scale applies to attention shapes only" "$TB" sweep --shapes 256x256x256 --softmax-scale 2 --plan-only --db "$pl/bad2.db"
run cli-10.14 2 "invalid value 'bhds' for --attn-layout (bhsd, bshd)" "$TB" sweep --shapes attn --attn-layout bhds --plan-only --db "$pl/bad2.db"
run cli-10.15 2 "invalid value '0' for --softmax-scale" "$TB" sweep --shapes attn --softmax-scale 0 --plan-only --db "$pl/bad2.db"
[ ! -e "$pl/bad2.db" ] && ok cli-10.16 || bad cli-10.16 "a refused option created the database"
run cli-10.7 2 "--resume takes the run's own options" "$TB" sweep --db "$pl/all.db" --resume 1 --shard 0/2
out=$("$TB" sweep "${vs[@]}" --shapes 512x512x512,1024x1024x1024 --plan-only --shard 5/6 --no-progress --db "$pl/empty.db" 2>&1); rc=$?
[ $rc = 0 ] && grep -q "= 0 items (shard 5/6: 0 of 2 shapes)" <<<"$out" && ok cli-10.8 || bad cli-10.8 "an empty shard: exit $rc: $out"
# the scripted worker, for sections 10 and 11: probe runs the real one; `measure` reports fake
# GPU D (UUID GPU-...-00D, or DEV_NAME_D) when started with --device D, answers each job with
# made-up results and logs it to DEV_JOBS; `env --device D` reports GPU D; it fails before
# measuring for the slot TILEBENCH_TEST_FAIL_SLOT names (as the real worker does), for every
# job with DEV_FAIL_ALL, and for the shape whose M is DEV_FAIL_M
cat > "$tmp/dev_worker" <<'PYEOF'
#!/usr/bin/python3
import json, os, sys
a = sys.argv[1:]
if a[:1] not in (["measure"], ["env"]):
    os.execv(os.environ["REAL_WORKER"], [os.environ["REAL_WORKER"]] + a)
out = os.fdopen(3, "w", buffering=1)
say = lambda **o: print(json.dumps(o), file=out)
def env(d):
    name = os.environ.get("DEV_NAME_" + d, "fake GPU")
    say(type="env", gpu_name=name, gpu_uuid="GPU-e0e0e0e0-0000-0000-0000-%012d" % int(d), cc_major=9, cc_minor=0, sm_count=132)
dev = a[a.index("--device") + 1] if "--device" in a else None
if a[0] == "env":
    env(dev or "0"); sys.exit(0)
if dev is not None:
    env(dev)
first = None   # a session (section 12): jobs follow while "more"; only the problem and the seed
while True:    # may change, and only when the first job said "keep_worker" (worker/job_line.h)
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    job = json.loads(line)
    rest = {k: v for k, v in job.items() if k not in ("variants", "more")}
    skip = ("problem", "seed") if (first or rest).get("keep_worker") else ()
    if first is not None and {k: v for k, v in rest.items() if k not in skip} != {k: v for k, v in first.items() if k not in skip}:
        say(type="fatal", error="a follow-up job that differs"); sys.exit(2)
    first = first or rest
    slot = job.get("slot", -1)
    d = job["device_uuid"] or str(job["device"])
    with open(os.environ["DEV_JOBS"], "a") as f:
        f.write(f'{job["problem"]["m"]} device={d} slot={slot} variants={len(job["variants"])}\n')
    if os.environ.get("KEEP_JOBS"):
        with open(os.environ["KEEP_JOBS"], "a") as f:
            f.write(f'{os.getpid()} m={job["problem"]["m"]} seed={job["seed"]} keep={job.get("keep_worker", 0)}\n')
    hook = os.environ.get("TILEBENCH_TEST_FAIL_SLOT", "")
    if os.environ.get("DEV_FAIL_ALL") or (hook and int(hook) == slot) or str(job["problem"]["m"]) == os.environ.get("DEV_FAIL_M"):
        say(type="fatal", error=f"planted failure of slot {slot}"); sys.exit(3)
    say(type="ready")
    for v in job["variants"]:
        say(type="begin", variant=v["name"])
        ms = 1.0 + 0.1 * sum(map(ord, v["name"])) % 7
        say(type="result", variant=v["name"], status="ok", disposition="passed", median_ms=ms, n_samples=3,
            samples_ms=[ms, ms, ms], samples_clock_mhz=[1980] * 3, method="cold", stop_reason="scripted")
    say(type="done")
    if not job.get("more"):
        sys.exit(0)
PYEOF
chmod +x "$tmp/dev_worker"
cp "$pl/s4-2.db" "$pl/r.db"
want=$(items "$pl/r.db" | sed 's/ planned$/ ok/' | sort)
out=$(DEV_JOBS="$pl/jobs" TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep --db "$pl/r.db" --resume 1 --no-progress --quiet 2>&1); rc=$?
got=$(items "$pl/r.db" | sort)
[ $rc = 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] && [ "$(wc -l < "$pl/jobs")" = "$(cut -d' ' -f2-4 <<<"$want" | sort -u | wc -l)" ] \
    && [ "$(/usr/bin/python3 -c 'import sqlite3,sys,json; c=sqlite3.connect(sys.argv[1]); r=c.execute("SELECT status, options_json FROM runs").fetchone(); print(r[0], json.loads(r[1])["shard"])' "$pl/r.db")" = "complete 2/4" ] \
    && ok cli-10.9 || bad cli-10.9 "exit $rc; resuming the planned shard measured $(grep -c ' ok$' <<<"$got") of $(wc -l <<<"$want") items, jobs: $(tr '\n' ';' < "$pl/jobs" 2>/dev/null); $out"

# 11. several GPUs in one sweep (--devices, issue 21), by a scripted worker: device D is a fake
# GPU with UUID GPU-...-00D; one slot per listed GPU draws shapes from one queue; a shape's
# variants are measured together by one worker; each result records its GPU; a slot whose
# worker fails before measuring (TILEBENCH_TEST_FAIL_SLOT, the hook the real worker has too)
# twice is taken out and the other finishes its shapes
dv="$tmp/dev"; mkdir -p "$dv"
byuuid() { /usr/bin/python3 -c '
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); seen = {}
for m, name, status, x in c.execute("SELECT p.m, v.name, m.status, m.extra_json FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN problems p ON p.id = m.problem_id"):
    seen.setdefault(m, set()).add(json.loads(x or "{}").get("gpu_uuid", "-")[-3:] + ":" + status)
print(" ".join(f"{m}={sorted(s)[0] if len(s) == 1 else sorted(s)}" for m, s in sorted(seen.items())))' "$1"; }
shp=256x256x256,512x512x512,768x768x768,1024x1024x1024
out=$(DEV_JOBS="$dv/j1" TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep "${vs[@]}" --shapes $shp --devices 0,1 --no-progress --quiet --db "$dv/a.db" 2>&1); rc=$?
got=$(byuuid "$dv/a.db")
[ $rc = 0 ] && [ "$(items "$dv/a.db" | grep -c ' ok$')" = 8 ] && ! grep -q "\[" <<<"$got" \
    && grep -q "device=0 " "$dv/j1" && grep -q "device=1 " "$dv/j1" && [ "$(wc -l < "$dv/j1")" = 4 ] \
    && ! grep -q -- '-:' <<<"$got" && ok cli-11.1 || bad cli-11.1 "exit $rc; per shape: $got; jobs: $(tr '\n' ';' < "$dv/j1"); $out"
# the costliest shapes first on several GPUs: each slot's first job (a slot's jobs are logged in
# its order; the two slots' lines interleave as their workers start) is 1024^3 or 768^3
firsts=$(for sl in 0 1; do grep -m1 "slot=$sl " "$dv/j1" | cut -d' ' -f1; done | sort -n | tr '\n' ' ')
[ "$firsts" = "768 1024 " ] && ok cli-11.1b || bad cli-11.1b "first job of each slot: $firsts; jobs: $(tr '\n' ';' < "$dv/j1")"
out=$(DEV_JOBS="$dv/j2" TILEBENCH_TEST_FAIL_SLOT=1 TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep "${vs[@]}" --shapes $shp --devices 0,1 --no-progress --quiet --db "$dv/b.db" 2>&1); rc=$?
got=$(byuuid "$dv/b.db")
n1=$(grep -c 'slot=1' "$dv/j2")   # as many shapes as slot 1 got to try before slot 0 took the rest
[ $rc = 0 ] && [ "$got" = "256=000:ok 512=000:ok 768=000:ok 1024=000:ok" ] && [ "$n1" -ge 1 ] \
    && grep -q "GPU 1: worker failed: planted failure of slot 1: its worker failed before measuring; shape .* goes to another GPU" <<<"$out" \
    && { [ "$n1" -lt 2 ] || grep -q "GPU 1 taken out of this sweep: its worker failed on two shapes in a row" <<<"$out"; } \
    && ok cli-11.2 || bad cli-11.2 "exit $rc; per shape: $got; jobs: $(tr '\n' ';' < "$dv/j2"); $out"
out=$(DEV_FAIL_ALL=1 DEV_JOBS="$dv/j3" TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep "${vs[@]}" --shapes $shp --devices 0,1 --no-progress --quiet --db "$dv/c.db" 2>&1); rc=$?
[ "$(items "$dv/c.db" | grep -c ' error$')" = 8 ] && /usr/bin/python3 -c 'import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute("SELECT reason FROM measurements").fetchall(); sys.exit(not all("failed before measuring on" in x[0] or "no GPU of --devices left" in x[0] for x in r))' "$dv/c.db" \
    && ok cli-11.3 || bad cli-11.3 "every GPU failing: exit $rc: $(items "$dv/c.db" | head -3); $out"
run cli-11.4 2 "--devices mixes GPU models: GPU 0 is fake GPU (sm_90, 132 SMs), GPU 1 is other GPU" env DEV_NAME_1="other GPU" DEV_JOBS="$dv/j4" TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep "${vs[@]}" --shapes 256x256x256 --devices 0,1 --db "$dv/d.db"
run cli-11.5 2 "invalid value '0,,1' for --devices" "$TB" sweep --devices 0,,1 --db "$dv/e.db"
run cli-11.6 2 "invalid value '64' for --devices" "$TB" sweep --devices 64 --db "$dv/e.db"
run cli-11.7 2 "--device and --devices are one or the other" "$TB" sweep --devices 0,1 --device 1 --db "$dv/e.db"
[ ! -e "$dv/d.db" ] && [ ! -e "$dv/e.db" ] && ok cli-11.8 || bad cli-11.8 "a refused --devices created a database"
# one shape whose worker fails before measuring on any GPU (say it runs out of memory): the
# shape's fault, not the GPUs': it is recorded failed once two GPUs failed on it, the other
# shapes are measured, and no GPU is taken out
out=$(DEV_FAIL_M=4096 DEV_JOBS="$dv/j10" TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep "${vs[@]}" \
      --shapes 256x256x256,4096x256x256,512x512x512,768x768x768,1024x1024x1024 --devices 0,1 --no-progress --quiet --db "$dv/f.db" 2>&1); rc=$?
got=$(items "$dv/f.db" | awk '{print $2 ":" $6}' | sort -u | tr '\n' ' ')
[ $rc = 0 ] && [ "$got" = "1024:ok 256:ok 4096:error 512:ok 768:ok " ] && ! grep -q "taken out" <<<"$out" \
    && grep -q "shape 4096x256x256 not measured: the worker failed before measuring on 2 GPUs" <<<"$out" \
    && ok cli-11.10 || bad cli-11.10 "exit $rc; statuses by shape: $got; $out"
"$TB" sweep "${vs[@]}" --shapes $shp --plan-only --devices 0,1 --no-progress --db "$dv/p.db" 2>/dev/null
out=$(DEV_JOBS="$dv/j9" TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep --db "$dv/p.db" --resume 1 --no-progress --quiet 2>&1); rc=$?
[ $rc = 0 ] && [ "$(items "$dv/p.db" | grep -c ' ok$')" = 8 ] && grep -q "device=1 " "$dv/j9" && ok cli-11.9 \
    || bad cli-11.9 "a plan with --devices resumed: exit $rc: $(tr '\n' ';' < "$dv/j9" 2>/dev/null); $out"

# 12. one worker for every shape (--keep-worker, issue 25), by the scripted worker of sections
# 10 and 11, which serves a session as the real one does and logs each job it answers with its
# pid, problem and seed to KEEP_JOBS
kw="$tmp/keep"; mkdir -p "$kw"
out=$(DEV_JOBS="$kw/d1" KEEP_JOBS="$kw/j1" TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep "${vs[@]}" --shapes $shp --keep-worker --no-progress --quiet --db "$kw/a.db" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(items "$kw/a.db" | grep -c ' ok$')" = 8 ] && [ "$(wc -l < "$kw/j1")" = 4 ] \
    && [ "$(cut -d' ' -f1 "$kw/j1" | sort -u | wc -l)" = 1 ] && [ "$(cut -d' ' -f2 "$kw/j1" | sort -u | wc -l)" = 4 ] \
    && [ "$(cut -d' ' -f3 "$kw/j1" | sort -u | wc -l)" = 4 ] && ! grep -q "keep=0" "$kw/j1" \
    && [ "$(/usr/bin/python3 -c 'import sqlite3,sys,json; print(json.loads(sqlite3.connect(sys.argv[1]).execute("SELECT options_json FROM runs").fetchone()[0]).get("keep_worker"))' "$kw/a.db")" = 1 ] \
    && ok cli-12.1 || bad cli-12.1 "--keep-worker: exit $rc, jobs: $(tr '\n' ';' < "$kw/j1" 2>/dev/null); $out"
# without it: a worker per shape, as before (the same scripted worker, which ends after a job
# without "more")
out=$(DEV_JOBS="$kw/d2" KEEP_JOBS="$kw/j2" TILEBENCH_WORKER="$tmp/dev_worker" "$TB" sweep "${vs[@]}" --shapes $shp --no-progress --quiet --db "$kw/b.db" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(items "$kw/b.db" | grep -c ' ok$')" = 8 ] && [ "$(cut -d' ' -f1 "$kw/j2" | sort -u | wc -l)" = 4 ] \
    && ! grep -q "keep=1" "$kw/j2" && ok cli-12.2 || bad cli-12.2 "without --keep-worker: exit $rc, jobs: $(tr '\n' ';' < "$kw/j2" 2>/dev/null); $out"
# refused with several GPUs and with the sanitizer (one line, exit 2, no database); and with
# --resume, whose run keeps its own options
for args in "--devices 0,1" "--sanitize" "--metrics banks" "--resume 1"; do
    out=$("$TB" sweep "${vs[@]}" --shapes 256x256x256 --keep-worker $args --db "$kw/c.db" 2>&1); rc=$?
    [ $rc = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && [ ! -e "$kw/c.db" ] && ok "cli-12.3 $args" \
        || bad "cli-12.3 $args" "exit $rc: $out"
done

echo "$pass passed, $fail failed"
[ $fail = 0 ]
