#!/usr/bin/env bash
# Fuzzes qtrain-opt's parser, the verifiers and the qtrain pipelines on
# mutated IR (fuzz/ir/ir.cpp) for SECONDS (default 60), from seeds made of
# every .mlir under test/ and examples/ split at "// -----". Crash
# reproducers go to the build's crashes/; the run fails if there is any,
# or if fewer than MIN_RUNS (default 10000) inputs ran.
#
#   scripts/fuzz-ir.sh [SECONDS]
#       The real search: builds the harness in FUZZ_IR_DIR (default
#       build-fuzz-ir) with qtrain's libraries under AddressSanitizer,
#       UndefinedBehaviorSanitizer and libFuzzer's coverage instrumentation
#       (Debian's MLIR as is; a cold build takes about 25 min on 2 cores),
#       and runs it in JOBS processes (default 2, fork mode).
#   scripts/fuzz-ir.sh --smoke [RUNS]
#       What CI runs (make test): the harness linked into the main build
#       (BUILD_DIR, default build; seconds to build), without sanitizers or
#       coverage of qtrain's code. Every seed runs through its pipeline
#       once, then libFuzzer mutates blindly up to RUNS executions (default
#       1000000) from a fixed seed, so that every CI run tries the same
#       inputs. It catches crashes and hangs on the seeds and near them; it
#       is no substitute for the coverage-guided run above.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
smoke=false
if [[ ${1:-} == --smoke ]]; then
  smoke=true
  shift
fi
seconds=${1:-60}
$smoke && runs_wanted=${1:-1000000}
jobs=${JOBS:-2}
dir=${FUZZ_IR_DIR:-$root/build-fuzz-ir}
min_runs=${MIN_RUNS:-10000}
if $smoke; then
  build=${BUILD_DIR:-build}
  [[ $build == /* ]] || build="$root/$build"
  dir="$build/fuzz-ir"
  mkdir -p "$dir"
  cmake -DQTRAIN_BUILD_IR_FUZZER=ON "$build" > /dev/null
  cmake --build "$build" --target qtrain-ir-fuzz > "$dir/build.log" 2>&1 || {
    tail -30 "$dir/build.log"; exit 1; }
  harness="$build/bin/qtrain-ir-fuzz"
elif [[ ! -f "$dir/build.ninja" ]]; then
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DQTRAIN_SANITIZE=ON -DQTRAIN_BUILD_IR_FUZZER=ON -DQTRAIN_BUILD_TESTS=OFF \
    -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir > /dev/null
fi
if ! $smoke; then
  cmake --build "$dir" --target qtrain-ir-fuzz > "$dir/build.log" 2>&1 || {
    tail -30 "$dir/build.log"; exit 1; }
  harness="$dir/bin/qtrain-ir-fuzz"
fi

corpus="$dir/corpus"
# The smoke run starts from the seeds alone, so that it is reproducible.
$smoke && rm -rf "$corpus"
mkdir -p "$corpus" "$dir/crashes"
python3 - "$root" "$corpus" <<'PY'
import hashlib, pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for f in list(root.glob("test/**/*.mlir")) + list(root.glob("examples/**/*.mlir")):
    for part in f.read_text().split("// -----"):
        data = part.encode()
        if 0 < len(data) <= 65536:
            (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY
log="$dir/fuzz.log"
before=$(ls "$dir/crashes" | wc -l)
if $smoke; then
  # One process: the first crash stops it and leaves its reproducer.
  seeds=$(ls "$corpus" | wc -l)
  start=$(date +%s)
  "$harness" "$corpus" -runs="$runs_wanted" -seed=1 -timeout=30 \
    -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$dir/crashes/" > "$log" 2>&1 || true
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  runs=${runs:-0}
  found=$(( $(ls "$dir/crashes" | wc -l) - before ))
  seconds=$(( $(date +%s) - start ))
  echo "ir (smoke): $seeds seeds, $runs executions in $seconds s; $found new reproducers in $dir/crashes"
else
  # Debian's MLIR is not instrumented; see scripts/sanitize.sh.
  export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0
  "$harness" "$corpus" -fork="$jobs" -ignore_crashes=1 \
    -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=4096 -max_len=65536 -artifact_prefix="$dir/crashes/" \
    > "$log" 2>&1 || true
  last=$(grep 'oom/timeout/crash' "$log" | tail -1 || true)
  runs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<< "$last")
  runs=${runs:-0}
  found=$(( $(ls "$dir/crashes" | wc -l) - before ))
  echo "ir: $runs executions in $seconds s; ${last#*cov: } ; $found new reproducers in $dir/crashes"
fi
if ((found > 0)); then
  echo "fuzz-ir.sh: FAILED: crashes, hangs or out-of-memory inputs found"
  exit 1
fi
if ((runs < min_runs)); then
  echo "fuzz-ir.sh: FAILED: fewer than $min_runs executions"
  exit 1
fi
