#!/usr/bin/env bash
# The accuracy and step time of each input-gradient mode (qtrain-compile
# --input-grad=f32|bf16|int, issue #20 item 4): LeNet and convnet under CPT
# 3-8/8 (--schedule=cpt:3:8 --grad-schedule=static:8) in run.sh's set-up
# (SGD lr 0.05, momentum 0.9, weight decay 5e-4, batch 128, 5 epochs,
# Fashion-MNIST), 3 seeds each, one training at a time on one thread.
# Prints per mode and model the mean test accuracy after epoch 5 ± half
# its range over the seeds, and the median step_seconds of seed 1's
# steps.csv (measured while the run trained: compare modes only from runs
# made on an idle machine).
#
#   benchmarks/accuracy/input-grad.sh [OUT_DIR] [MODELS] [MODES]
#
# MODELS defaults to "lenet convnet", MODES to "f32 bf16 int". Finished runs
# (DIR/done) are kept, so an interrupted run picks up where it stopped.
# Needs a built tree (make build); a convnet training takes about 10 minutes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${BUILD_DIR:-$root/build}/bin
out=${1:-$root/accuracy-runs/input-grad}
models=${2:-lenet convnet}
modes=${3:-f32 bf16 int}
mkdir -p "$out"

for model in $models; do
  for mode in $modes; do
    bundle=$out/$model-$mode.qtb
    [[ -d $bundle ]] || "$bin/qtrain-compile" "$root/examples/models/$model.mlir" \
      -o "$bundle" --bits=3:8 --grad-bits=8 --input-grad="$mode" \
      > "$out/$model-$mode.compile.txt"
    for seed in 1 2 3; do
      dir=$out/$model-$mode-seed$seed
      [[ -f $dir/done ]] && continue
      "$bin/qtrain-run" "$bundle" --schedule=cpt:3:8 --grad-schedule=static:8 \
        --epochs=5 --lr=0.05 --momentum=0.9 --weight-decay=5e-4 --seed="$seed" \
        --threads=1 --progress=none --overwrite --out="$dir" > "$dir.log" 2>&1
      touch "$dir/done"
    done
  done
done

printf '%-8s %-5s %-22s %s\n' model mode "accuracy (mean ± spread)" \
  "median step_seconds (seed 1)"
for model in $models; do
  for mode in $modes; do
    acc=$(for seed in 1 2 3; do
      awk -F, 'NR > 1 && $1 == 4 { print 100 * $5 }' \
        "$out/$model-$mode-seed$seed/epochs.csv"
    done | awk '{ s += $1; n++; if (n == 1 || $1 < lo) lo = $1;
                  if (n == 1 || $1 > hi) hi = $1 }
                END { printf "%.2f ± %.2f", s / n, (hi - lo) / 2 }')
    col=$(head -1 "$out/$model-$mode-seed1/steps.csv" | tr , '\n' |
      grep -n '^step_seconds$' | cut -d: -f1)
    step=$(tail -n +2 "$out/$model-$mode-seed1/steps.csv" | cut -d, -f"$col" |
      sort -g | awk '{ v[NR] = $1 } END { printf "%.1f ms", 1000 * v[int((NR + 1) / 2)] }')
    printf '%-8s %-5s %-22s %s\n' "$model" "$mode" "$acc" "$step"
  done
done
