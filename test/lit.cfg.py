# -*- Python -*-
# lit configuration of the qtrain lit tests (the GoogleTest suites have their
# own configuration in unittests/; check-qtrain runs both).

import os
import subprocess
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

# Compiles a step lowered by qtrain-lower-cpu (bare-pointer memrefs,
# results as out-parameters) to a shared object, with the microkernels its
# GEMMs call (runtime/include/qtrain/microkernels.h), as qtrain-compile links it.
# The shared libraries the archive needs (oneDNN where the build has it, the
# OpenMP runtime of the thread pool) and their rpath are listed next to it,
# one a line.
with open(os.path.join(config.qtrain_obj_root, "lib",
                       "libQTrainMicrokernels.link")) as f:
    microkernel_libs = " ".join(line.strip() for line in f if line.strip())
config.substitutions.append(
    ("%cc_step", "clang-22 -O1 -shared -fPIC -w -Wl,--whole-archive " +
     os.path.join(config.qtrain_obj_root, "lib", "libQTrainMicrokernels.a") +
     " -Wl,--no-whole-archive " + microkernel_libs +
     " -lstdc++ -lpthread -lm -rtlib=compiler-rt -unwindlib=libgcc"))
config.substitutions.append(
    ("%gradcheck", sys.executable + " " +
     os.path.join(config.qtrain_src_root, "test", "lib", "gradcheck.py")))
config.substitutions.append(("%python", sys.executable))
# MLIR's runner and its C runtime (vector.print), for IR run as it is.
config.substitutions.append(("%mlir_c_runner_utils", os.path.join(
    os.path.dirname(config.llvm_tools_dir), "lib", "libmlir_c_runner_utils.so")))
# Debian's python3, which has python3-torch (qtrain-import-torch's tests).
config.substitutions.append(("%torch_python", "/usr/bin/python3"))
config.substitutions.append(("%qtrain_tools_dir", config.qtrain_tools_dir))
config.substitutions.append(("%qtrain_obj_root", config.qtrain_obj_root))
config.substitutions.append(
    ("%variant_compare", sys.executable + " " +
     os.path.join(config.qtrain_src_root, "test", "lib", "variant_compare.py")))
config.substitutions.append(
    ("%trainloop", sys.executable + " " +
     os.path.join(config.qtrain_src_root, "test", "lib", "trainloop.py")))

# The CUDA toolkit's ptxas (the CUDA target's cubins, docs/cuda.md):
# $CUDA_PATH or /usr/local/cuda. Tests that assemble cubins need it
# (REQUIRES: ptxas or %if ptxas); a machine without the toolkit skips them.
cuda_path = os.environ.get("CUDA_PATH") or "/usr/local/cuda"
ptxas = os.path.join(cuda_path, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.substitutions.append(("%cuda_path", cuda_path))

# A stand-in libcuda.so.1 (test/unittests/Runtime/fixtures): qtrain-run
# --device=cuda through the step's host code without a GPU.
config.substitutions.append(("%fake_cuda_driver", os.path.join(
    config.qtrain_obj_root, "test", "unittests", "Runtime", "fixtures",
    "libQTrainFakeCudaDriver.so")))
# And a stand-in libcublasLt that computes on that driver's host memory.
config.substitutions.append(("%fake_cublaslt", os.path.join(
    config.qtrain_obj_root, "test", "unittests", "Runtime", "fixtures",
    "libQTrainFakeCublasLt.so")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["qtrain-opt", "qtrain-compile", "qtrain-schedule", "qtrain-quant-check", "qtrain-float-check", "qtrain-ldp-gradcheck",
     "qtrain-train-toy", "qtrain-variant-check", "qtrain-input-grad-check",
     "qtrain-run", "qtrain-import-torch", "qtrain-cuda-check"], [config.qtrain_tools_dir]
)

# tools/faults-read-only.test runs qtrain-run in a read-only directory; as
# root, who ignores permissions, it runs it as user nobody
# (test/lib/read_only.py), which must then reach the build directory and run
# the tool. Under a directory nobody cannot traverse (a checkout in /root,
# say) it cannot, and the test is unsupported rather than failed.
def _nobody_can_reach(paths):
    def unprivileged():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)

    probe = 'for p; do [ -x "$p" ] || exit 1; done'
    try:
        return subprocess.run(["/bin/sh", "-c", probe, "probe"] + paths,
                              preexec_fn=unprivileged,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


if os.geteuid() != 0 or _nobody_can_reach(
        [config.test_exec_root,
         os.path.join(config.qtrain_tools_dir, "qtrain-run")]):
    config.available_features.add("read-only-dirs")

# benchmarks/step compares qtrain's step with PyTorch's (Debian
# python3-torch, which `make test` installs: scripts/setup.sh --tests).
if subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                  stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("torch")
# qtrain-import-torch's torchvision models (python3-torchvision).
if subprocess.run(["/usr/bin/python3", "-c", "import torchvision"],
                  stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL).returncode == 0:
    config.available_features.add("torchvision")

# Data-parallel runs (docs/scale-out.md): qtrain-run built with MPI, and
# Open MPI's launcher. Open MPI refuses to start ranks as root unless told
# (--allow-run-as-root), and a machine with fewer cores than ranks needs
# --oversubscribe.
if config.qtrain_have_mpi and config.mpiexec and os.access(config.mpiexec,
                                                           os.X_OK):
    config.available_features.add("mpi")
    mpirun = config.mpiexec + " --oversubscribe"
    if os.geteuid() == 0:
        mpirun += " --allow-run-as-root"
    config.substitutions.append(("%mpirun", mpirun))

# Sanitizer builds (docs/reliability.md): pass the sanitizers' options on.
import os as _os
for _name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if _name in _os.environ:
        config.environment[_name] = _os.environ[_name]
