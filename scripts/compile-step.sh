#!/usr/bin/env bash
# Lowers a training step (the output of qtrain-autodiff, quantized or not) to
# a shared object with plain C pointers for tensors and results as
# out-parameters (docs/training-step.md, "Lowered form").
#
#   scripts/compile-step.sh STEP.mlir OUT.so
#
# The step is lowered by qtrain's named pipeline qtrain-lower-cpu (the one
# qtrain-compile runs) and compiled by clang-22 -O2; unlike qtrain-compile it
# keeps the step's own signature (no bundle, no packed entry points), which
# is what test/lib/trainloop.py calls.
set -euo pipefail
[[ $# -eq 2 ]] || { sed -n '2,11p' "$0"; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
llvm=/usr/lib/llvm-22
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$build_dir/bin/qtrain-opt" "$1" --qtrain-lower-cpu -o "$tmp/llvm.mlir"
"$llvm/bin/mlir-translate" -allow-unregistered-dialect --mlir-to-llvmir \
  "$tmp/llvm.mlir" -o "$tmp/step.ll"
# The step calls the microkernels and allocates through their library;
# the libraries the archive needs (oneDNN, OpenMP) are listed next to it.
mapfile -t needs < <(grep -v '^$' "$build_dir/lib/libQTrainMicrokernels.link")
clang-22 -O2 -shared -fPIC -w "$tmp/step.ll" -Wl,--whole-archive \
  "$build_dir/lib/libQTrainMicrokernels.a" -Wl,--no-whole-archive \
  "${needs[@]}" -lstdc++ -lpthread -lm -o "$2"
