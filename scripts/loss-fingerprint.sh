#!/usr/bin/env bash
# Trains the example models for 20 steps in every precision mode a bundle
# serves and prints what the runs computed, so that two builds can be
# compared bit for bit (a refactoring must not change a single loss):
#
#   scripts/loss-fingerprint.sh BIN_DIR OUT_DIR > before.txt
#   ... rebuild ...
#   scripts/loss-fingerprint.sh build/bin OUT_DIR2 > after.txt
#   diff before.txt after.txt
#
# Per run it prints each step's loss, bits, loss scale, skip/promotion flags
# and per-site bits (steps.csv without the timing columns) and the epoch's
# test loss and accuracy; losses are printed to 9 significant digits, which
# identify an f32 exactly. MODELS (default "lenet convnet") picks the models.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:?usage: loss-fingerprint.sh BIN_DIR OUT_DIR}
out=${2:?usage: loss-fingerprint.sh BIN_DIR OUT_DIR}
models=${MODELS:-lenet convnet}
mkdir -p "$out"

# 20 steps of batch 128; CPT with 2 cycles so that the cycle fits the run.
run_args=(--epochs=1 --train-limit=2560 --test-limit=512 --seed=3)

compile() { # NAME MODEL ARGS...
  local name=$1 model=$2
  shift 2
  rm -rf "$out/$name.qtb"
  "$bin/qtrain-compile" "$root/examples/models/$model.mlir" -o "$out/$name.qtb" \
    "$@" >"$out/$name.compile.log" 2>&1 ||
    { cat "$out/$name.compile.log" >&2; exit 1; }
}

train() { # BUNDLE RUN ARGS...
  local bundle=$1 name=$2
  shift 2
  rm -rf "$out/$name"
  "$bin/qtrain-run" "$out/$bundle.qtb" "${run_args[@]}" --out="$out/$name" "$@" \
    >"$out/$name.log" 2>&1 || { cat "$out/$name.log" >&2; exit 1; }
  echo "== $name"
  # step,epoch,loss,bits,grad_bits,bitops,cumulative_bitops,step_seconds,
  # loss_scale,skipped,promoted,site_bits,ldp_lambda: drop step_seconds.
  cut -d, -f1-7,9- "$out/$name/steps.csv"
  # epoch,step,train_loss,test_loss,test_accuracy,eval_bits,...,seconds
  cut -d, -f1-6 "$out/$name/epochs.csv"
}

for model in $models; do
  compile "$model-cpt" "$model" --schedule=cpt:3:8 --bits=3:8 --grad-bits=8 --fp32
  train "$model-cpt" "$model-cpt" --schedule=cpt:3:8:cycles=2
  train "$model-cpt" "$model-static8" --schedule=static:8
  train "$model-cpt" "$model-fp32" --schedule=fp32 --grad-schedule=fp32
  compile "$model-ldp" "$model" --policy=ldp --bits=3:8 --grad-bits=8
  train "$model-ldp" "$model-ldp"
done
if [[ " $models " == *" lenet "* ]]; then
  compile lenet-mixed lenet --schedule=static:8 --bits=8 --grad-bits=8 \
    --precision-ratio=0.5
  train lenet-mixed lenet-mixed
fi
