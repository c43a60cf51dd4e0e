#!/usr/bin/env bash
# The r-sweep of PAPERS.md section 4: compiles MODEL with qtrain-compile
# --precision-ratio=r for each r, trains each bundle on Fashion-MNIST for
# every seed, and prints per r the tensor memory of the assignment (the
# memory model of qtrain-assign-precision: every P, Y, GY, GP at its
# format's width), its ratio to all-high (r = 0), the measured peak of the
# step's buffers (qtrain-run's allocator count), the test accuracy (mean and
# range over the seeds) and the skipped steps of dynamic loss scaling. An
# fp32 row (no rounding at all) is the reference.
#
#   benchmarks/precision/sweep.sh [MODEL] [TRAIN_LIMIT] [SEEDS] [RATIOS] [JOBS]
#   defaults: examples/models/convnet.mlir 19200 "1 2 3" "0 0.2 0.4 0.6 0.8 1" 2
#
# Environment: BUILD (default build), OUT (default a temporary directory),
# EPOCHS (default 1), TEST_LIMIT (default 10000), ORDER (default largest),
# PROMOTION (default true: qtrain-compile --precision-promotion).
set -euo pipefail
cd "$(dirname "$0")/../.."
MODEL=${1:-examples/models/convnet.mlir}
LIMIT=${2:-19200}
SEEDS=${3:-"1 2 3"}
RATIOS=${4:-"0 0.2 0.4 0.6 0.8 1"}
JOBS=${5:-2}
BUILD=${BUILD:-build}
EPOCHS=${EPOCHS:-1}
TEST_LIMIT=${TEST_LIMIT:-10000}
ORDER=${ORDER:-largest}
PROMOTION=${PROMOTION:-true}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
BIN="$BUILD/bin"

# Bundles: fp32 and one per ratio.
"$BIN/qtrain-compile" "$MODEL" -o "$OUT/fp32.qtb" --policy=none >/dev/null
for r in $RATIOS; do
  "$BIN/qtrain-compile" "$MODEL" -o "$OUT/r$r.qtb" --precision-ratio="$r" \
    --precision-order="$ORDER" --precision-promotion="$PROMOTION" \
    --precision-report="$OUT/r$r.json" >/dev/null
done

# Training runs, JOBS at a time (the compiled step is single-threaded).
jobs=()
for seed in $SEEDS; do
  for cfg in fp32 $(for r in $RATIOS; do echo "r$r"; done); do
    jobs+=("$cfg $seed")
  done
done
printf '%s\n' "${jobs[@]}" | xargs -P "$JOBS" -L 1 bash -c '
  cfg=$0 seed=$1
  "'"$BIN"'/qtrain-run" "'"$OUT"'/$cfg.qtb" --data=fashion-mnist \
    --epochs='"$EPOCHS"' --train-limit='"$LIMIT"' --test-limit='"$TEST_LIMIT"' \
    --seed=$seed --progress=none --overwrite --out="'"$OUT"'/run-$cfg-$seed" \
    > "'"$OUT"'/run-$cfg-$seed.txt" 2>&1 || echo "run $cfg seed $seed failed"'

python3 - "$OUT" "$RATIOS" "$SEEDS" <<'PY'
import json, re, sys, statistics
out, ratios, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def acc(cfg):
    values, skipped, peak = [], 0, 0.0
    for s in seeds:
        text = open(f"{out}/run-{cfg}-{s}.txt").read()
        m = re.search(r"final test accuracy: ([0-9.]+)%", text)
        values.append(float(m.group(1)) if m else float("nan"))
        m = re.search(r"(\d+) steps skipped", text)
        skipped += int(m.group(1)) if m else 0
        m = re.search(r"peak memory of the step's buffers: ([0-9.]+) MiB", text)
        peak = max(peak, float(m.group(1)) if m else float("nan"))
    return values, skipped, peak
high = json.load(open(f"{out}/r{ratios[0]}.json"))["assigned_bytes_after"]
print(f"{'config':>8} {'low groups':>10} {'model MiB':>10} {'vs r=0':>7} "
      f"{'peak MiB':>9} {'accuracy mean':>13} {'min..max':>13} {'skipped':>7}")
v, sk, pk = acc("fp32")
print(f"{'fp32':>8} {'-':>10} {'-':>10} {'-':>7} {pk:9.2f} "
      f"{statistics.mean(v):12.2f}% {min(v):6.2f}..{max(v):5.2f} {sk:7d}")
for r in ratios:
    rep = json.load(open(f"{out}/r{r}.json"))
    b = rep["assigned_bytes_after"]
    v, sk, pk = acc(f"r{r}")
    print(f"{'r=' + r:>8} {str(rep['low_groups']) + '/' + str(len(rep['groups'])):>10} "
          f"{b / 2**20:10.2f} {b / high:7.3f} {pk:9.2f} "
          f"{statistics.mean(v):12.2f}% {min(v):6.2f}..{max(v):5.2f} {sk:7d}")
print(f"seeds {' '.join(seeds)}; outputs in {out}")
PY
