# gpu_common.sh - sourced by the gpu tests: skip (77) without a GPU, helpers to check.
has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }
if ! has_gpu; then echo "SKIP: no NVIDIA GPU here"; exit 77; fi
pass=0; fail=0
ok() { echo "ok   $1"; pass=$((pass+1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail+1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
finish() { echo "$pass passed, $fail failed"; [ $fail = 0 ]; }
