#!/bin/bash
ROOT=$(cd .. && pwd)
set -o pipefail
t0=$(date +%s)
cmake -S . -B b -G Ninja -DTB_MAIN=$ROOT > $OUT/cmake.log 2>&1 || { cat $OUT/cmake.log; exit 1; }
cmake --build b -j16 > $OUT/build.log 2>&1 || { tail -50 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
nvcc -std=c++17 -O2 -arch=sm_90 -I$ROOT/harness/include -o vtest vtest.cu -ldl || exit 1
L=b/lib/tilebench/variants
./vtest check $L/*.so > $OUT/check.log 2>&1; echo "check rc=$?"
grep -E "FAIL|LAUNCH|SETUP" $OUT/check.log | head -40; tail -1 $OUT/check.log
./vtest time $L/*.so 2>&1 | grep TIME > $OUT/time.log
cut -c1-110 $OUT/time.log
for f in mma_sync_128x128x32_s3_w8 mma_sync_64x64x64_s4_w4 simt_tiled; do
  SMALL=1 timeout 60 compute-sanitizer --tool memcheck ./vtest check $L/$f.so > $OUT/memcheck_$f.log 2>&1; echo "memcheck $f rc=$? $(grep -E 'ERROR SUMMARY|FAILURES' $OUT/memcheck_$f.log | paste -sd' ')"
done
for f in mma_sync_128x128x32_s3_w8 mma_sync_64x64x64_s4_w4; do
  SMALL=1 timeout 120 compute-sanitizer --tool racecheck ./vtest check $L/$f.so > $OUT/racecheck_$f.log 2>&1; echo "racecheck $f rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILURES' $OUT/racecheck_$f.log | paste -sd' ')"
done
