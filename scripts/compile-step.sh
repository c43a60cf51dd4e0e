#!/usr/bin/env bash
# Lowers a training step (the output of qtrain-autodiff, quantized or not) to
# a shared object with plain C pointers for tensors and results as
# out-parameters (docs/training-step.md, "Lowered form").
#
#   scripts/compile-step.sh STEP.mlir OUT.so
#
# This is the interim CPU path until qtrain-compile exists: qtrain's
# quantizers are lowered by convert-qtrain-to-linalg, everything else by
# upstream MLIR passes (loops, no vectorization yet) and clang-22 -O2.
set -euo pipefail
[[ $# -eq 2 ]] || { sed -n '2,9p' "$0"; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
llvm=/usr/lib/llvm-22
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$build_dir/bin/qtrain-opt" "$1" --convert-qtrain-to-linalg -o "$tmp/linalg.mlir"
"$llvm/bin/mlir-opt" "$tmp/linalg.mlir" -allow-unregistered-dialect \
  --one-shot-bufferize='bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map' \
  --buffer-results-to-out-params='modify-public-functions=1 hoist-static-allocs=1' \
  --buffer-deallocation-pipeline --convert-linalg-to-loops --lower-affine \
  --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm \
  --convert-math-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm \
  --convert-func-to-llvm='use-bare-ptr-memref-call-conv=1' \
  --convert-index-to-llvm --reconcile-unrealized-casts -o "$tmp/llvm.mlir"
"$llvm/bin/mlir-translate" -allow-unregistered-dialect --mlir-to-llvmir \
  "$tmp/llvm.mlir" -o "$tmp/step.ll"
clang-22 -O2 -shared -fPIC -w "$tmp/step.ll" "$llvm/lib/libmlir_c_runner_utils.so" \
  -Wl,-rpath,"$llvm/lib" -o "$2"
