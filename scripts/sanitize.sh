#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer runs (docs/reliability.md).
#
#   scripts/sanitize.sh runtime   the runtime alone (no LLVM/MLIR): its
#                                 GoogleTest suites (the runtime's and the
#                                 microkernels'), built standalone in
#                                 build-asan-rt; a few minutes. make test
#                                 runs this.
#   scripts/sanitize.sh all       the whole project in build-asan, then every
#                                 lit and GoogleTest test; long on 2 cores.
#
# Any sanitizer report fails the run (-fno-sanitize-recover=all).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
what=${1:-runtime}
# allocator_may_return_null: an impossible request returns null, as malloc
# does, so the tests of that failure path run under ASan too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
compilers=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22)
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
case "$what" in
  runtime)
    dir=${SANITIZE_DIR:-$root/build-asan-rt}
    [[ -f "$dir/build.ninja" ]] || cmake -S "$root/runtime" -B "$dir" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQTRAIN_SANITIZE=ON \
      -DQTRAIN_RUNTIME_BUILD_TESTS=ON "${compilers[@]}" "${launcher[@]}" > /dev/null
    cmake --build "$dir" -j "$(nproc)" --target QTrainRuntimeTests QTrainMicrokernelsTests > "$dir/build.log" 2>&1 || {
      tail -50 "$dir/build.log"; exit 1; }
    "$dir/test/unittests/Runtime/QTrainRuntimeTests" --gtest_brief=1
    # The microkernels, from an instrumented copy (QTrainMicrokernelsChecked).
    "$dir/test/unittests/Kernels/QTrainMicrokernelsTests" --gtest_brief=1
    ;;
  all)
    # Debian's MLIR libraries are not instrumented, but the LLVM headers our
    # instrumented code includes poison allocator memory that those
    # libraries then use ("use-after-poison" in MLIRContext's setup): user
    # poisoning is off. The tools' singletons live until exit: leaks off.
    export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0
    dir=${SANITIZE_DIR:-$root/build-asan}
    [[ -f "$dir/build.ninja" ]] || cmake -S "$root" -B "$dir" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQTRAIN_SANITIZE=ON \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit "${compilers[@]}" > /dev/null
    cmake --build "$dir" -j "$(nproc)" --target check-qtrain
    ;;
  *)
    echo "sanitize.sh: expected 'runtime' or 'all', got '$what'" >&2
    exit 2
    ;;
esac
