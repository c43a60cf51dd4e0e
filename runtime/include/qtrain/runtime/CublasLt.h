//===- CublasLt.h - cuBLASLt, loaded at run time ----------------*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// NVIDIA's cuBLASLt computing the GEMM of a generated kernel: in the step
/// on the GPU in place of the kernel where it has an algorithm for it
/// (qtrain_cuda_gemm, CudaHostAbi.h), and in qtrain-cuda-check as the
/// yardstick, for its time and as a second result to check. Loaded with dlopen
/// (QTRAIN_CUBLASLT, else libcublasLt.so.13, libcublasLt.so, then the same
/// under /usr/local/cuda/lib64), so nothing links CUDA; the few types and enum
/// values are copied from cublasLt.h, cublas_api.h and library_types.h.
///
/// The layout. cuBLASLt is column-major; ours is row-major:
///   A [m, k] row-major  is  a column-major k x m matrix, ld k  (= A^T)
///   B [n, k] row-major  is  a column-major k x n matrix, ld k  (= B^T)
///   C [m, n] row-major  is  a column-major n x m matrix, ld n  (= C^T)
/// and C = A B^T is C^T = B A^T. So cuBLASLt's "A" is our B buffer (k x n,
/// ld k) with transa = T, its "B" is our A buffer (k x m, ld k) with
/// transb = N, and its C = D is our C buffer (n x m, ld n): the TN layout
/// that cuBLASLt's fp8 and int8 kernels require. A batch strides by n k,
/// m k and m n elements.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_CUBLASLT_H
#define QTRAIN_RUNTIME_CUBLASLT_H

#include "qtrain/runtime/CudaDriver.h"
#include "qtrain/runtime/Manifest.h"
#include "qtrain/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace qtrain::rt {

/// The loaded cuBLASLt with a handle. Not copyable.
class CublasLt {
public:
  /// Loads the library and creates a handle (in the current context).
  static qtrain::rt::Status load(std::unique_ptr<CublasLt> &out);
  ~CublasLt();
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;

  const std::string &getPath() const { return path; }

  /// A GEMM set up for one kernel's shape and encodings.
  class Plan;
  /// Plans are owned through this (Plan is defined in CublasLt.cpp).
  struct PlanDeleter {
    void operator()(Plan *plan) const;
  };
  using PlanPtr = std::unique_ptr<Plan, PlanDeleter>;
  /// Sets up the GEMM of `kernel` with at most `workspaceBytes` of
  /// workspace. When cuBLASLt has no algorithm for it, `out` stays null and
  /// `unsupported` says why ("no algorithm", "CUBLAS_STATUS_NOT_SUPPORTED");
  /// other failures are errors.
  qtrain::rt::Status plan(const qtrain::rt::CudaKernelSpec &kernel,
                          size_t workspaceBytes, PlanPtr &out,
                          std::string &unsupported) const;
  /// Enqueues `plan` on `stream` (null: the legacy default stream):
  /// C = A B^T over our buffers.
  qtrain::rt::Status run(const Plan &plan, qtrain::rt::CUdeviceptr a,
                         qtrain::rt::CUdeviceptr b, qtrain::rt::CUdeviceptr c,
                         qtrain::rt::CUdeviceptr workspace,
                         size_t workspaceBytes,
                         qtrain::rt::CUstream stream = nullptr) const;

  struct Api;

private:
  CublasLt() = default;
  std::string describe(int status) const;
  std::string path;
  void *library = nullptr;
  std::unique_ptr<Api> api;
  void *handle = nullptr;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_CUBLASLT_H
