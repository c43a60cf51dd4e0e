#!/usr/bin/env bash
# Times qtrain's implicit-GEMM convolutions (f32 and s8) against the im2col
# form qtrain ran before and oneDNN, for every convolution of the example
# models' training steps (docs/performance.md).
#
#   benchmarks/conv/run.sh [THREADS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
OMP_NUM_THREADS=${1:-1} "$build/bin/qtrain-bench-conv" "${1:-1}"
