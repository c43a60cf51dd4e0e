#!/usr/bin/env bash
# Reproduces the accuracy comparison of docs/run.md: the reference set-up of
# the seeds' method (SGD lr 0.05, momentum 0.9, weight decay 5e-4, batch 128,
# no learning-rate decay, 5 epochs) on Fashion-MNIST, 3 seeds per
# configuration, and prints the mean test accuracy after each epoch next to
# the reference implementation's figure.
#
#   benchmarks/accuracy/run.sh [OUT_DIR] [JOBS]
#
# Needs a built tree (make build). Runs JOBS trainings at a time (default 2);
# takes about an hour on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${BUILD_DIR:-$root/build}/bin
out=${1:-$root/accuracy-runs}
jobs=${2:-2}
mkdir -p "$out"

[[ -d $out/mlp.qtb ]] || "$bin/qtrain-compile" "$root/examples/models/mlp.mlir" \
  -o "$out/mlp.qtb" --bits=8 --grad-bits=8 > "$out/mlp.compile.txt"
[[ -d $out/lenet.qtb ]] || "$bin/qtrain-compile" "$root/examples/models/lenet.mlir" \
  -o "$out/lenet.qtb" --bits=3:8 --grad-bits=8 > "$out/lenet.compile.txt"

# name bundle schedule grad-schedule reference-accuracy
configs=(
  "mlp-fp32 mlp fp32 fp32 87.1"
  "lenet-fp32 lenet fp32 fp32 88.4"
  "lenet-static8 lenet static:8 static:8 88.1"
  "lenet-cpt3-8 lenet cpt:3:8 static:8 87.05"
)
run() {
  local name=$1 bundle=$2 schedule=$3 grad=$4 seed=$5
  local dir=$out/$name-seed$seed
  [[ -f $dir/done ]] && return 0
  "$bin/qtrain-run" "$out/$bundle.qtb" --schedule="$schedule" --grad-schedule="$grad" \
    --epochs=5 --lr=0.05 --momentum=0.9 --weight-decay=5e-4 --seed="$seed" \
    --progress=none --overwrite --out="$dir" > "$dir.log" 2>&1 && touch "$dir/done"
}
export -f run
export out bin
for c in "${configs[@]}"; do
  read -r name bundle schedule grad ref <<< "$c"
  for seed in 1 2 3; do
    echo "$name $bundle $schedule $grad $seed"
  done
done | xargs -P "$jobs" -L 1 bash -c 'run "$@"' _

printf '%-16s %-8s %s\n' config reference "mean test accuracy after epochs 1..5 (3 seeds)"
for c in "${configs[@]}"; do
  read -r name bundle schedule grad ref <<< "$c"
  line=$(for epoch in 0 1 2 3 4; do
    for seed in 1 2 3; do
      awk -F, -v e=$epoch 'NR > 1 && $1 == e { print $5 }' "$out/$name-seed$seed/epochs.csv"
    done | awk '{ s += $1; n++ } END { printf "%.2f ", 100 * s / n }'
  done)
  printf '%-16s %-8s %s\n' "$name" "$ref" "$line"
done
for c in "${configs[@]}"; do
  read -r name _ _ _ _ <<< "$c"
  grep -h "BitOps:" "$out/$name-seed1.log" | sed "s/^/$name: /"
done
