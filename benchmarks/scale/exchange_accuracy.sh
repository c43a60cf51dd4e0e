#!/usr/bin/env bash
# LeNet under CPT 3-8/8 (the demo's bundle at batch 64), 5 epochs of
# Fashion-MNIST on 2 ranks (global batch 128), with the gradients exchanged
# in fp32, bf16 and int8, for seeds FIRST_SEED..SEEDS (default 1..3; the
# runs are deterministic, so seeds can be run apart). Prints each run's
# final test accuracy (at 8 bits), the means, and the bytes each mode puts
# on the wire per step.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${BUILD_DIR:-$root/build}/bin
source "$root/benchmarks/scale/mpirun.sh"
seeds=${SEEDS:-3}
modes=(${MODES:-fp32 bf16 int8})
out=$(mktemp -d /tmp/qtrain-scale-accuracy.XXXXXX)
"$bin/qtrain-compile" "$root/examples/models/lenet.mlir" --schedule=cpt:3:8 --batch=64 -o "$out/lenet.qtb" > /dev/null
printf '%-6s' seed; printf ' %-8s' "${modes[@]}"; echo
for seed in $(seq "${FIRST_SEED:-1}" "$seeds"); do
  printf '%-6s' "$seed"
  for mode in "${modes[@]}"; do
    "${mpirun[@]}" -np 2 "$bin/qtrain-run" "$out/lenet.qtb" --epochs=5 --seed="$seed" \
      --allreduce="$mode" --progress=none --out="$out/$mode-$seed" > "$out/$mode-$seed.txt"
    acc=$(sed -n 's/^final test accuracy: \([0-9.]*\)%.*/\1/p' "$out/$mode-$seed.txt")
    printf ' %-8s' "$acc"
    echo "$mode $acc" >> "$out/acc"
  done
  echo
done
printf '%-6s' mean
for mode in "${modes[@]}"; do
  awk -v m="$mode" '$1 == m {s += $2; n++} END {printf " %-8.2f", s / n}' "$out/acc"
done
echo
for mode in "${modes[@]}"; do
  sed -n "s/^gradient exchange (\([a-z0-9]*\), 2 ranks): \([0-9.]* MiB\) per rank per step, \([0-9.]* MiB\) sent.*/\1: \2 payload, \3 sent per rank per step/p" "$out/$mode-${FIRST_SEED:-1}.txt"
done
