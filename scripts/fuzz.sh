#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (AddressSanitizer and
# UndefinedBehaviorSanitizer, clang-22) and runs each for SECONDS (default
# 60) from the seed corpus in fuzz/corpus, printing the executions per
# harness. Fails on any crash, leak, sanitizer report or timeout (the
# reproducer is left in FUZZ_DIR/crashes), and when a harness runs fewer
# than MIN_RUNS (default 10000) executions.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     FUZZ_DIR (default build-fuzz)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift || true
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(manifest schedule checkpoint idx npy)
dir=${FUZZ_DIR:-$root/build-fuzz}
min_runs=${MIN_RUNS:-10000}

if [[ ! -f "$dir/build.ninja" ]]; then
  cmake -S "$root/fuzz" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 > /dev/null
fi
cmake --build "$dir" -j "$(nproc)" > "$dir/build.log" 2>&1 || {
  cat "$dir/build.log"; exit 1; }

mkdir -p "$dir/crashes" "$dir/tmp"
status=0
printf '%-12s %10s %8s %s\n' harness executions seconds result
for h in "${harnesses[@]}"; do
  corpus="$dir/corpus/$h"
  mkdir -p "$corpus"
  cp -n "$root/fuzz/corpus/$h/"* "$corpus/" 2>/dev/null || true
  log="$dir/$h.log"
  start=$(date +%s)
  if TMPDIR="$dir/tmp" "$dir/fuzz-$h" "$corpus" -max_total_time="$seconds" \
       -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$dir/crashes/$h-" > "$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log)"
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  runs=${runs:-0}
  if [[ $result == ok && $runs -lt $min_runs ]]; then
    result="FAILED: fewer than $min_runs executions"
    status=1
  fi
  printf '%-12s %10s %8s %s\n' "$h" "$runs" "$(( $(date +%s) - start ))" "$result"
done
exit $status
