#!/usr/bin/env bash
# LeNet written in PyTorch (examples/torch/lenet.py), imported and trained
# under CPT 3-8/8 for 5 epochs of Fashion-MNIST, against the hand-written
# examples/models/lenet.mlir under the same flags, for seeds 1..SEEDS
# (default 3): the seed is torch.manual_seed for the imported model's
# initial weights and qtrain-run --seed for both (shuffle, rounding noise,
# the hand-written model's initialization). Prints the final test accuracy
# (at 8 bits) of each run and the means.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${BUILD_DIR:-$root/build}/bin
seeds=${SEEDS:-3}
out=$(mktemp -d /tmp/qtrain-cpt-accuracy.XXXXXX)
flags=(--epochs=5 --lr=0.05 --momentum=0.9 --weight-decay=5e-4 --progress=none)
"$bin/qtrain-compile" "$root/examples/models/lenet.mlir" --schedule=cpt:3:8 -o "$out/hand.qtb" > /dev/null
printf '%-6s %-22s %-22s\n' seed "hand-written lenet.mlir" "imported lenet.py"
for seed in $(seq 1 "$seeds"); do
  "$bin/qtrain-import-torch" "$root/examples/torch/lenet.py:LeNet" --input-shape=128x1x28x28 \
    --seed="$seed" -o "$out/torch$seed.mlir"
  "$bin/qtrain-compile" "$out/torch$seed.mlir" --schedule=cpt:3:8 -o "$out/torch$seed.qtb" > /dev/null
  a=$("$bin/qtrain-run" "$out/hand.qtb" --seed="$seed" --out="$out/hand-run$seed" "${flags[@]}" |
      sed -n 's/^final test accuracy: \([0-9.]*\)%.*/\1/p')
  b=$("$bin/qtrain-run" "$out/torch$seed.qtb" --seed="$seed" --out="$out/torch-run$seed" "${flags[@]}" |
      sed -n 's/^final test accuracy: \([0-9.]*\)%.*/\1/p')
  printf '%-6s %-22s %-22s\n' "$seed" "$a" "$b"
  echo "$a $b" >> "$out/acc"
done
awk '{a += $1; b += $2; n++} END {printf "%-6s %-22.2f %-22.2f\n", "mean", a / n, b / n}' "$out/acc"
