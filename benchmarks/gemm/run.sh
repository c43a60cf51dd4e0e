#!/usr/bin/env bash
# Builds qtrain's forward variants of a linear layer for each benchmark
# shape (fp32 and integer at 10, 8, 4, 2, 1 bits) and times them next to oneDNN
# and OpenBLAS with qtrain-bench-gemm (docs/performance.md).
#
#   benchmarks/gemm/run.sh [THREADS]        every shape
#   SHAPES="1024,1024,1024" benchmarks/gemm/run.sh 2
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
bin=$build/bin
threads=${1:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; OPENBLAS_CORETYPE unset"
unset OPENBLAS_CORETYPE
# Square shapes; M=8 (memory-bound); the three GEMMs of training (forward,
# input gradient, weight gradient, M,N,K) of lenet's conv2 and fc1 and of
# convnet's conv2 and fc1, convolutions as implicit GEMMs (N*OH*OW rows;
# convnet fc1's input and weight gradients share one shape).
square="256,256,256 1024,1024,1024 2048,2048,2048 8,4096,4096"
lenet="12800,16,150 25088,6,400 16,150,12800 128,120,400 128,400,120 120,400,128"
convnet="73728,64,288 86528,32,576 64,288,73728 128,128,9216 128,9216,128"
shapes=${SHAPES:-"$square $lenet $convnet"}
for shape in $shapes; do
  shape=${shape//,/ }
  read -r M N K <<< "$shape"
  cat > "$tmp/linear.mlir" <<MLIR
func.func @forward(%w: tensor<${N}x${K}xf32> {qtrain.param}, %x: tensor<${M}x${K}xf32>) -> tensor<${M}x${N}xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<${K}x${N}xf32>
  %wt = linalg.transpose ins(%w : tensor<${N}x${K}xf32>) outs(%e : tensor<${K}x${N}xf32>) permutation = [1, 0]
  %i = tensor.empty() : tensor<${M}x${N}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%i : tensor<${M}x${N}xf32>) -> tensor<${M}x${N}xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<${M}x${K}xf32>, tensor<${K}x${N}xf32>) outs(%f : tensor<${M}x${N}xf32>) -> tensor<${M}x${N}xf32>
  return %y : tensor<${M}x${N}xf32>
}
MLIR
  "$bin/qtrain-opt" "$tmp/linear.mlir" --qtrain-insert-quant --qtrain-autodiff \
    --qtrain-form-kernels --qtrain-materialize-variants="bits=1,2,4,8,10 grad-bits=8" \
    --qtrain-integer-kernels --qtrain-lower-cpu -o "$tmp/linear.llvm.mlir" 2>/dev/null
  /usr/lib/llvm-22/bin/mlir-translate -allow-unregistered-dialect --mlir-to-llvmir \
    "$tmp/linear.llvm.mlir" -o "$tmp/linear.ll"
  clang-22 -O3 -march=native -shared -fPIC -w "$tmp/linear.ll" \
    "$build/lib/libQTrainMicrokernels.a" -lstdc++ -lpthread -lm -o "$tmp/linear.so"
  OMP_NUM_THREADS=$threads "$bin/qtrain-bench-gemm" "$M" "$N" "$K" "$tmp/linear.so" "$threads"
  echo
done
