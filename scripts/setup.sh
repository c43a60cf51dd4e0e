#!/usr/bin/env bash
# Installs every Debian package qtrain needs, then configures and builds it.
#
#   scripts/setup.sh                  install, configure, build (into ./build)
#   scripts/setup.sh --install-only   only install the packages
#   scripts/setup.sh --tests          also the packages only tests use
#                                     (PyTorch, for benchmarks/step)
#   BUILD_DIR=out scripts/setup.sh    build elsewhere
#   CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Debug" scripts/setup.sh
#
# Idempotent: packages already installed are not touched, an existing build
# tree is reused. apt-get runs directly as root and through sudo otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
install_only=0
tests=0
for arg in "$@"; do
  case "$arg" in
    --install-only) install_only=1 ;;
    --tests) tests=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

# Everything the build, the demo and most tests use (Open MPI: qtrain-run's
# data-parallel training, docs/scale-out.md). LLVM/MLIR 22 come from
# Debian (bookworm-security); see docs/toolchain.md.
packages=(
  cmake ninja-build ccache make python3
  clang-22 clang-format-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libclang-rt-22-dev libomp-22-dev
  libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev nlohmann-json3-dev
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers libopenblas-dev
  openmpi-bin libopenmpi-dev
  dataset-fashion-mnist
)
# PyTorch from Debian (about 175 packages), for the side-by-side step
# benchmark's smoke test (benchmarks/step) and qtrain-import-torch's tests
# (with torchvision's models), so only `make test` installs it; users of
# qtrain-import-torch install python3-torch (and python3-torchvision).
((tests)) && packages+=(python3-torch python3-torchvision)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "setup.sh: installing ${missing[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    apt=(apt-get)
  elif command -v sudo >/dev/null 2>&1; then
    apt=(sudo apt-get)
  else
    echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${apt[@]}" update -qq
  "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup.sh: all ${#packages[@]} packages are installed"
fi

((install_only)) && exit 0

llvm_dir=/usr/lib/llvm-22
if [[ ! -f "$build_dir/build.ninja" ]]; then
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build_dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR="$llvm_dir/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$llvm_dir/bin/lit" \
    ${CMAKE_ARGS:-}
fi
cmake --build "$build_dir" -j "$(nproc)"
