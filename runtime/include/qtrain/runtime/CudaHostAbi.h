//===- CudaHostAbi.h - What a bundle's CUDA step library calls --*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A bundle's step on the GPU (cuda/step.so, docs/cuda.md) is host code
/// that allocates device buffers, copies between them and launches the
/// kernels embedded in it as PTX. It calls the functions below, which it
/// leaves undefined: the program that loads it defines them (QTrainRuntime
/// does, and qtrain-run exports them to the libraries it loads). They run
/// on the CudaDriver attached with attachCudaHostAbi(), in the context
/// current on the calling thread.
///
/// - qtrain_cuda_*: the step's device memory (qtrain-cuda-host-calls).
///   Buffers come from a pool kept across steps, since the step allocates
///   and frees the same sizes every step; `host_shared` ones are managed
///   memory, which the step's host code reads and writes too.
/// - qtrain_cuda_upload: host values (the entry point's record of its
///   scalar arguments, qtrain-arguments-to-device) copied to device memory
///   in stream order, without a wait: the bytes are read at the call, into
///   page-locked staging memory kept per destination, and copied from
///   there when the stream reaches the copy. Recorded, the copy is a node
///   of the step's CUDA graph that reads the staging memory each time the
///   graph runs, so a new step's values need no node update. Staging
///   memory whose copy may not have run yet is waited for before it is
///   written again.
/// - qtrain_cuda_synchronize: called before every memory access of the
///   step's host code; waits for the kernels launched since the last wait.
/// - qtrain_cuda_gemm: a product of the step (qtrain-gpu-gemms) offered to
///   the GEMM library attached with attachCudaHostGemms() (cuBLASLt):
///   C = A B^T per batch over the generated kernel's dense row-major
///   buffers A [batch, m, k], B [batch, n, k], C [batch, m, n]. It returns
///   1 when the library took it (enqueued on the default stream) and 0 when
///   the step must launch its own kernel: no library is attached, or the
///   library has no algorithm for that shape and encoding (asked once per
///   shape, the plan kept).
/// - With a CudaGraphRecorder attached (attachCudaHostGraphs), launches and
///   library products are recorded, not enqueued, and run as one CUDA graph
///   when the step waits (qtrain_cuda_synchronize), copies
///   (qtrain_cuda_memcpy) or ends (flushCudaHostLaunches).
/// - mgpu*: the subset of MLIR's GPU runtime ABI that gpu-to-llvm and the
///   gpu.binary translation call (module loads from the library's
///   constructors, one launch per kernel). Every launch goes to one stream
///   (the legacy default stream, or the recorder's), in order, and is not
///   waited for: the streams gpu-to-llvm makes around a launch are that
///   stream.
///
/// A failure is recorded (the first one, with the driver's error) and the
/// calls after it do nothing; takeCudaHostError() reports it. A buffer that
/// cannot be allocated ends the process with an error: the step's host
/// code would dereference it.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_CUDAHOSTABI_H
#define QTRAIN_RUNTIME_CUDAHOSTABI_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace qtrain::rt {

class CudaDriver;

/// Routes the ABI to `driver` (null detaches it) and clears the recorded
/// failure.
void attachCudaHostAbi(const CudaDriver *driver);
/// The first failure since the last call, cleared; empty when none.
std::string takeCudaHostError();
/// Returns the pool's cached buffers to the driver.
void releaseCudaHostPool();

class CudaGraphRecorder;
/// Records the step's launches on `recorder` (null: launch them one by
/// one, the default).
void attachCudaHostGraphs(CudaGraphRecorder *recorder);
/// Runs what the attached recorder holds (the end of a step); a failure is
/// recorded for takeCudaHostError().
void flushCudaHostLaunches();
/// Launches and waits since attachCudaHostAbi(), and bytes the pool holds.
int64_t getCudaHostLaunches();
int64_t getCudaHostWaits();
int64_t getCudaHostPoolBytes();

class CublasLt;
/// Lets qtrain_cuda_gemm run products on `library` (null: none; the step
/// launches its generated kernels), with `workspaceBytes` of device
/// workspace at `workspace`. Clears the plans.
void attachCudaHostGemms(const CublasLt *library, uint64_t workspace,
                         size_t workspaceBytes);
/// Products the library ran, and those it declined, since
/// attachCudaHostAbi().
int64_t getCudaHostLibraryGemms();
int64_t getCudaHostDeclinedGemms();

/// qtrain_cuda_gemm's codes: a kind in the order f32, tf32, bf16, fp8, i8
/// (gemmKernelKinds() of the compiler), an operand encoding in the order
/// f32, bf16, e4m3, e5m2, s8 (GemmEncoding).
enum class CudaGemmKind : int32_t { F32, TF32, BF16, FP8, I8 };
enum class CudaGemmEncoding : int32_t { F32, BF16, E4M3, E5M2, S8 };

} // namespace qtrain::rt

extern "C" {
void *qtrain_cuda_alloc(int64_t bytes, int32_t hostShared);
void qtrain_cuda_free(void *pointer);
void qtrain_cuda_memcpy(void *destination, void *source, int64_t bytes);
void qtrain_cuda_upload(void *destination, const void *source, int64_t bytes);
void qtrain_cuda_synchronize();
int32_t qtrain_cuda_gemm(uintptr_t a, uintptr_t b, uintptr_t c, int32_t kind,
                         int32_t aEncoding, int32_t bEncoding, int64_t batch,
                         int64_t m, int64_t n, int64_t k);

void *mgpuModuleLoad(void *data, size_t bytes);
void *mgpuModuleLoadJIT(void *ptx, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, size_t paramCount);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
}

#endif // QTRAIN_RUNTIME_CUDAHOSTABI_H
