#!/usr/bin/env bash
# Fuzzes qtrain-opt's parser, the verifiers and the qtrain pipelines on
# mutated IR (fuzz/ir/ir.cpp) for SECONDS (default 60) in JOBS processes
# (default 2), from seeds made of every .mlir under test/ and examples/
# split at "// -----". Builds the harness in FUZZ_IR_DIR (default
# build-fuzz-ir): qtrain's libraries with AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer's coverage instrumentation, and
# Debian's MLIR as is (a cold build takes about 25 min on 2 cores). Crash
# reproducers go to FUZZ_IR_DIR/crashes; the run fails if there is any, or
# if fewer than MIN_RUNS (default 10000) inputs ran.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
jobs=${JOBS:-2}
dir=${FUZZ_IR_DIR:-$root/build-fuzz-ir}
min_runs=${MIN_RUNS:-10000}
if [[ ! -f "$dir/build.ninja" ]]; then
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DQTRAIN_SANITIZE=ON -DQTRAIN_BUILD_IR_FUZZER=ON -DQTRAIN_BUILD_TESTS=OFF \
    -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir > /dev/null
fi
cmake --build "$dir" --target qtrain-ir-fuzz > "$dir/build.log" 2>&1 || {
  tail -30 "$dir/build.log"; exit 1; }

corpus="$dir/corpus"
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
# Debian's MLIR is not instrumented; see scripts/sanitize.sh.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0
log="$dir/fuzz.log"
before=$(ls "$dir/crashes" | wc -l)
"$dir/bin/qtrain-ir-fuzz" "$corpus" -fork="$jobs" -ignore_crashes=1 \
  -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$seconds" -timeout=30 \
  -rss_limit_mb=4096 -max_len=65536 -artifact_prefix="$dir/crashes/" \
  > "$log" 2>&1 || true
last=$(grep 'oom/timeout/crash' "$log" | tail -1 || true)
runs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<< "$last")
runs=${runs:-0}
found=$(( $(ls "$dir/crashes" | wc -l) - before ))
echo "ir: $runs executions in $seconds s; ${last#*cov: } ; $found new reproducers in $dir/crashes"
if ((found > 0)); then
  echo "fuzz-ir.sh: FAILED: crashes, hangs or out-of-memory inputs found"
  exit 1
fi
if ((runs < min_runs)); then
  echo "fuzz-ir.sh: FAILED: fewer than $min_runs executions"
  exit 1
fi
