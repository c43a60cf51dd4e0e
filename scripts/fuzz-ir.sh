#!/usr/bin/env bash
# Fuzzes qtrain-opt's parser, the verifiers and the qtrain pipelines on
# mutated IR (fuzz/ir/ir.cpp) for SECONDS (default 60), from seeds made of
# every .mlir under test/ and examples/ split at "// -----". Needs the
# sanitizer build (scripts/sanitize.sh all, in build-asan); adds the
# harness to it. Fails on any crash, sanitizer report or timeout (the
# reproducer is left in build-asan/fuzz-ir-crashes) or on fewer than
# MIN_RUNS (default 10000) executions.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
dir=${SANITIZE_DIR:-$root/build-asan}
min_runs=${MIN_RUNS:-10000}
[[ -f "$dir/build.ninja" ]] || { echo "fuzz-ir.sh: run scripts/sanitize.sh all first" >&2; exit 2; }
cmake -DQTRAIN_BUILD_IR_FUZZER=ON "$dir" > /dev/null
cmake --build "$dir" --target qtrain-ir-fuzz > "$dir/fuzz-ir-build.log" 2>&1 || {
  tail -30 "$dir/fuzz-ir-build.log"; exit 1; }

corpus="$dir/fuzz-ir-corpus"
mkdir -p "$corpus" "$dir/fuzz-ir-crashes"
python3 - "$root" "$corpus" <<'PY'
import hashlib, pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for f in list(root.glob("test/**/*.mlir")) + list(root.glob("examples/**/*.mlir")):
    for part in f.read_text().split("// -----"):
        data = part.encode()
        if 0 < len(data) <= 65536:
            (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
PY
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0
log="$dir/fuzz-ir.log"
status=0
"$dir/bin/qtrain-ir-fuzz" "$corpus" -max_total_time="$seconds" -timeout=30 \
  -rss_limit_mb=4096 -print_final_stats=1 -max_len=65536 \
  -artifact_prefix="$dir/fuzz-ir-crashes/" > "$log" 2>&1 || status=1
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
runs=${runs:-0}
echo "ir: $runs executions in $seconds s, $(ls "$corpus" | wc -l) corpus inputs"
if ((status)); then
  echo "fuzz-ir.sh: FAILED, see $log"
  exit 1
fi
if ((runs < min_runs)); then
  echo "fuzz-ir.sh: fewer than $min_runs executions"
  exit 1
fi
