#!/usr/bin/env bash
# Samples per second of one process against two ranks on this machine, for
# fp32 bundles of LeNet and ConvNet: one process at batch 128 on every core
# (--threads=0) and on one, and 2 ranks at batch 64 with one thread each
# (global batch 128), STEPS steps (default 200) on Fashion-MNIST. The rate
# is global batch x steps / the sum of rank 0's step times (the exchange
# included, evaluation not). Writes what the scaling model needs
# (benchmarks/scale/model.py) to $OUT (default /tmp/qtrain-throughput.json).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${BUILD_DIR:-$root/build}/bin
source "$root/benchmarks/scale/mpirun.sh"
steps=${STEPS:-200}
json=${OUT:-/tmp/qtrain-throughput.json}
out=$(mktemp -d /tmp/qtrain-scale-throughput.XXXXXX)
flags=(--train-limit=$((steps * 128)) --test-limit=128 --epochs=1 --progress=none)
rate() {  # steps.csv global-batch -> samples/s, mean step ms
  python3 - "$1" "$2" <<'PY'
import csv, sys
t = [float(r["step_seconds"]) for r in csv.DictReader(open(sys.argv[1]))][5:]
print(f"{int(sys.argv[2]) * len(t) / sum(t):.0f} {1e3 * sum(t) / len(t):.2f}")
PY
}
echo "{" > "$json"
printf '%-8s %-26s %-26s %-26s %s\n' model "1 process, all cores" "1 process, 1 thread" "2 ranks x 1 thread" "2 ranks / best 1 process"
first=1
for model in lenet convnet; do
  "$bin/qtrain-compile" "$root/examples/models/$model.mlir" --policy=none --batch=64 -o "$out/$model-64.qtb" > /dev/null
  "$bin/qtrain-compile" "$root/examples/models/$model.mlir" --policy=none --batch=128 -o "$out/$model-128.qtb" > /dev/null
  "$bin/qtrain-run" "$out/$model-128.qtb" "${flags[@]}" --threads=0 --out="$out/$model-all" > /dev/null
  "$bin/qtrain-run" "$out/$model-128.qtb" "${flags[@]}" --threads=1 --out="$out/$model-one" > /dev/null
  "${mpirun[@]}" -np 2 "$bin/qtrain-run" "$out/$model-64.qtb" "${flags[@]}" --threads=1 --out="$out/$model-dp" > "$out/$model-dp.txt"
  read -r all allms < <(rate "$out/$model-all/steps.csv" 128)
  read -r one onems < <(rate "$out/$model-one/steps.csv" 128)
  read -r dp dpms < <(rate "$out/$model-dp/steps.csv" 128)
  exch=$(sed -n 's/.*; \([0-9.]*\) ms per step (.*/\1/p' "$out/$model-dp.txt")
  payload=$(sed -n 's/.*gradients exchanged in fp32: \([0-9.]*\) MiB.*/\1/p' "$out/$model-dp.txt")
  best=$(( all > one ? all : one ))
  printf '%-8s %-26s %-26s %-26s %.2fx\n' "$model" "$all/s ($allms ms)" "$one/s ($onems ms)" "$dp/s ($dpms ms, exch $exch)" \
    "$(awk -v a="$dp" -v b="$best" 'BEGIN {print a / b}')"
  ((first)) || echo "," >> "$json"
  first=0
  printf '"%s": {"all_cores": %s, "one_thread": %s, "two_ranks": %s, "exchange_ms": %s, "payload_mib": %s}\n' \
    "$model" "$all" "$one" "$dp" "$exch" "$payload" >> "$json"
done
echo "}" >> "$json"
echo "wrote $json"
