#!/bin/bash
# submit.sh - a tilebench sweep as a Slurm job array of N shards (one GPU each) and a merge job
# that runs once every shard succeeded (README, "Sweeping on a cluster").
#   scripts/slurm/submit.sh N OUT [sweep options...]
# OUT (created) gets sweep.args, shard-I.db of each task, the jobs' logs and, at the end,
# merged.db. TB names the tilebench binary (default: build/bin/tilebench of this checkout;
# every node must see the same path, and OUT, on a shared file system). SBATCH_ARGS adds
# options to both sbatch calls (a partition, an account, a time limit), split at spaces: no
# quoting inside it. Prints the two job ids.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ] || [ "$1" = --help ] || [ "$1" = -h ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    [ $# -ge 2 ] && exit 0 || exit 2
fi
n=$1 out=$2; shift 2
case $n in ''|*[!0-9]*) echo "submit.sh: N must be a number from 1 to 4096, not '$n'" >&2; exit 2 ;; esac
if [ "$n" -lt 1 ] || [ "$n" -gt 4096 ]; then echo "submit.sh: N must be from 1 to 4096, not $n" >&2; exit 2; fi
for a in "$@"; do
    case $a in --shard|--shard=*|--db|--db=*|--resume|--resume=*)
        echo "submit.sh: '$a' is set per task; give the other sweep options" >&2; exit 2 ;;
    esac
done
TB=${TB:-$here/../../build/bin/tilebench}
[ -x "$TB" ] || { echo "submit.sh: no tilebench at '$TB' (set TB)" >&2; exit 2; }
TB=$(cd "$(dirname "$TB")" && pwd)/$(basename "$TB")
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -e "$out/merged.db" ] && { echo "submit.sh: '$out/merged.db' exists: use a new folder" >&2; exit 2; }
printf '%s\n' "$@" > "$out/sweep.args"
export TB TB_OUT="$out"
read -r -a extra <<<"${SBATCH_ARGS:-}"
array=$(sbatch --parsable "${extra[@]}" --chdir="$out" --array="0-$((n - 1))" "$here/tilebench-shard.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable "${extra[@]}" --chdir="$out" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
        "$here/tilebench-merge.sbatch")
merge=${merge%%;*}
echo "shards: job array $array ($n tasks); merge: job $merge, after all of them; result: $out/merged.db"
