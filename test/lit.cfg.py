# -*- Python -*-
# lit configuration of the qtrain lit tests (the GoogleTest suites have their
# own configuration in unittests/; check-qtrain runs both).

import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "qtrain"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["unittests", "lib", "Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.qtrain_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%qtrain_src_root", config.qtrain_src_root))

# SSA captures must not leak between CHECK-LABEL blocks.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

# Lowering of a training step on tensors to a shared object with plain C
# pointers for memrefs and results as out-parameters (used by the numerical
# tests until qtrain-compile exists). qtrain annotations are opaque to the
# upstream tools, hence -allow-unregistered-dialect.
config.substitutions.append((
    "%lower_to_llvm",
    "-allow-unregistered-dialect "
    "--one-shot-bufferize='bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map' "
    "--buffer-results-to-out-params='modify-public-functions=1 hoist-static-allocs=1' "
    "--buffer-deallocation-pipeline "
    "--convert-linalg-to-loops --lower-affine --convert-scf-to-cf "
    "--expand-strided-metadata --finalize-memref-to-llvm --convert-math-to-llvm "
    "--convert-arith-to-llvm --convert-cf-to-llvm "
    "--convert-func-to-llvm='use-bare-ptr-memref-call-conv=1' "
    "--convert-index-to-llvm --reconcile-unrealized-casts"))
# Compiles the lowered step; strided copies call memrefCopy from MLIR's
# C runner utilities.
runner_utils = os.path.join(config.llvm_tools_dir, "..", "lib",
                            "libmlir_c_runner_utils.so")
config.substitutions.append(
    ("%cc_step", "clang-22 -O1 -shared -fPIC -w %s -Wl,-rpath,%s" %
     (runner_utils, os.path.dirname(runner_utils))))
config.substitutions.append(
    ("%gradcheck", sys.executable + " " +
     os.path.join(config.qtrain_src_root, "test", "lib", "gradcheck.py")))

config.substitutions.append(("%python", sys.executable))
config.substitutions.append(
    ("%trainloop", sys.executable + " " +
     os.path.join(config.qtrain_src_root, "test", "lib", "trainloop.py")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["qtrain-opt", "qtrain-compile", "qtrain-schedule", "qtrain-quant-check",
     "qtrain-train-toy", "qtrain-variant-check"], [config.qtrain_tools_dir]
)
