#!/usr/bin/env bash
# The main job: compile LeNet with CPT 3-8/8 into a bundle, train it on
# Fashion-MNIST with qtrain-run, and print the test accuracy.
#
#   scripts/demo.sh            (make demo runs it after scripts/setup.sh)
#
# DEMO_EPOCHS (default 2) sets the length; the reference set-up of docs/run.md
# is 5 epochs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
bin=$build_dir/bin
out=$build_dir/demo
epochs=${DEMO_EPOCHS:-2}
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }

step "1. Compile examples/models/lenet.mlir: CPT 3-8 bit forward, 8 bit backward"
rm -rf "$out/lenet.qtb"
"$bin/qtrain-compile" "$root/examples/models/lenet.mlir" -o "$out/lenet.qtb" \
  --schedule=cpt:3:8 --bits=3:8 --grad-bits=8

step "2. Train it on Fashion-MNIST for $epochs epochs (SGD lr 0.05, momentum 0.9, weight decay 5e-4, batch 128)"
rm -rf "$out/run"
"$bin/qtrain-run" "$out/lenet.qtb" --data=fashion-mnist --epochs="$epochs" \
  --lr=0.05 --momentum=0.9 --weight-decay=5e-4 --seed=1 --out="$out/run"
