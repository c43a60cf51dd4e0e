//===- CublasLt.cpp - cuBLASLt, loaded at run time -----------------------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/CublasLt.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

using namespace qtrain::rt;
using qtrain::rt::CudaKernelSpec;
using qtrain::rt::CUdeviceptr;
using qtrain::rt::Status;

namespace {

// cublas_api.h, library_types.h and cublasLt.h.
constexpr int kStatusSuccess = 0;       // CUBLAS_STATUS_SUCCESS
constexpr int kStatusNotSupported = 15; // CUBLAS_STATUS_NOT_SUPPORTED
constexpr int kOpN = 0, kOpT = 1;       // CUBLAS_OP_N, CUBLAS_OP_T
constexpr int kCompute32F = 68;         // CUBLAS_COMPUTE_32F
constexpr int kCompute32FFastTf32 = 77; // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr int kCompute32I = 72;         // CUBLAS_COMPUTE_32I
constexpr int kR32F = 0, kR16BF = 14, kR8I = 3, kR32I = 10; // CUDA_R_*
constexpr int kR8FE4M3 = 28, kR8FE5M2 = 29;
constexpr int kDescTransA = 3, kDescTransB = 4; // CUBLASLT_MATMUL_DESC_*
constexpr int kLayoutBatchCount = 5;            // ..._LAYOUT_BATCH_COUNT
constexpr int kLayoutStridedBatchOffset = 6;    // int64_t
constexpr int kPrefMaxWorkspaceBytes = 1;       // uint64_t

/// cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t, as declared.
struct MatmulAlgo {
  uint64_t data[8];
};
struct HeuristicResult {
  MatmulAlgo algo;
  size_t workspaceSize;
  int state;
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(HeuristicResult) == 96, "cublasLtMatmulHeuristicResult_t");

int dataType(const std::string &encoding) {
  if (encoding == "f32")
    return kR32F;
  if (encoding == "bf16")
    return kR16BF;
  if (encoding == "e4m3")
    return kR8FE4M3;
  if (encoding == "e5m2")
    return kR8FE5M2;
  if (encoding == "s8")
    return kR8I;
  return kR32I;
}

} // namespace

struct CublasLt::Api {
  int (*create)(void **handle);
  int (*destroy)(void *handle);
  const char *(*statusName)(int status);
  const char *(*statusString)(int status);
  int (*descCreate)(void **desc, int computeType, int scaleType);
  int (*descDestroy)(void *desc);
  int (*descSet)(void *desc, int attribute, const void *value, size_t size);
  int (*layoutCreate)(void **layout, int type, uint64_t rows, uint64_t cols,
                      int64_t ld);
  int (*layoutDestroy)(void *layout);
  int (*layoutSet)(void *layout, int attribute, const void *value, size_t size);
  int (*prefCreate)(void **pref);
  int (*prefDestroy)(void *pref);
  int (*prefSet)(void *pref, int attribute, const void *value, size_t size);
  int (*heuristic)(void *handle, void *desc, void *a, void *b, void *c, void *d,
                   void *pref, int requested, HeuristicResult *results,
                   int *returned);
  int (*matmul)(void *handle, void *desc, const void *alpha, const void *a,
                void *aLayout, const void *b, void *bLayout, const void *beta,
                const void *c, void *cLayout, void *d, void *dLayout,
                const MatmulAlgo *algo, void *workspace, size_t workspaceBytes,
                void *stream);
};

class CublasLt::Plan {
public:
  explicit Plan(const Api &api) : api(api) {}
  ~Plan() {
    for (void *layout : {aLayout, bLayout, cLayout})
      if (layout)
        api.layoutDestroy(layout);
    if (desc)
      api.descDestroy(desc);
  }
  Plan(const Plan &) = delete;
  Plan &operator=(const Plan &) = delete;

  const Api &api;
  void *desc = nullptr;
  /// cuBLASLt's A (our B), its B (our A), C = D.
  void *aLayout = nullptr, *bLayout = nullptr, *cLayout = nullptr;
  MatmulAlgo algo{};
  size_t workspaceBytes = 0;
  bool integer = false;
};

void CublasLt::PlanDeleter::operator()(Plan *plan) const { delete plan; }

CublasLt::~CublasLt() {
  if (handle)
    api->destroy(handle);
  // The library stays mapped, as the driver does.
}

std::string CublasLt::describe(int status) const {
  const char *name = api && api->statusName ? api->statusName(status) : nullptr;
  std::string out = name ? name : "cuBLAS status " + std::to_string(status);
  if (const char *text =
          api && api->statusString ? api->statusString(status) : nullptr)
    out += std::string(" (") + text + ")";
  return out;
}

Status CublasLt::load(std::unique_ptr<CublasLt> &out) {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("QTRAIN_CUBLASLT"); env && *env)
    candidates.push_back(env);
  else
    candidates = {"libcublasLt.so.13", "libcublasLt.so",
                  "/usr/local/cuda/lib64/libcublasLt.so.13",
                  "/usr/local/cuda/lib64/libcublasLt.so"};
  void *library = nullptr;
  std::string tried, path;
  for (const std::string &candidate : candidates) {
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      path = candidate;
      break;
    }
    const char *why = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why ? why : candidate);
  }
  if (!library)
    return Status::error("no cuBLASLt: " + tried);
  std::unique_ptr<CublasLt> lt(new CublasLt());
  lt->path = path;
  lt->library = library;
  lt->api = std::make_unique<Api>();
  Api &f = *lt->api;
  struct Entry {
    const char *name;
    void **slot;
    bool optional;
  };
  auto slot = [](auto &function) {
    return reinterpret_cast<void **>(&function);
  };
  const Entry entries[] = {
      {"cublasLtCreate", slot(f.create), false},
      {"cublasLtDestroy", slot(f.destroy), false},
      {"cublasLtGetStatusName", slot(f.statusName), true},
      {"cublasLtGetStatusString", slot(f.statusString), true},
      {"cublasLtMatmulDescCreate", slot(f.descCreate), false},
      {"cublasLtMatmulDescDestroy", slot(f.descDestroy), false},
      {"cublasLtMatmulDescSetAttribute", slot(f.descSet), false},
      {"cublasLtMatrixLayoutCreate", slot(f.layoutCreate), false},
      {"cublasLtMatrixLayoutDestroy", slot(f.layoutDestroy), false},
      {"cublasLtMatrixLayoutSetAttribute", slot(f.layoutSet), false},
      {"cublasLtMatmulPreferenceCreate", slot(f.prefCreate), false},
      {"cublasLtMatmulPreferenceDestroy", slot(f.prefDestroy), false},
      {"cublasLtMatmulPreferenceSetAttribute", slot(f.prefSet), false},
      {"cublasLtMatmulAlgoGetHeuristic", slot(f.heuristic), false},
      {"cublasLtMatmul", slot(f.matmul), false},
  };
  for (const Entry &e : entries) {
    *e.slot = dlsym(library, e.name);
    if (!*e.slot && !e.optional)
      return Status::error(path + ": not cuBLASLt: it has no " +
                           std::string(e.name));
  }
  if (int r = f.create(&lt->handle); r != kStatusSuccess) {
    lt->handle = nullptr;
    return Status::error(path + ": cublasLtCreate: " + lt->describe(r));
  }
  out = std::move(lt);
  return Status::success();
}

Status CublasLt::plan(const CudaKernelSpec &kernel, size_t workspaceBytes,
                      PlanPtr &out, std::string &unsupported) const {
  out.reset();
  unsupported.clear();
  const Api &f = *api;
  PlanPtr p(new Plan(f));
  p->integer = kernel.kind == "i8";
  int compute = p->integer              ? kCompute32I
                : kernel.kind == "tf32" ? kCompute32FFastTf32
                                        : kCompute32F;
  int scale = p->integer ? kR32I : kR32F;
  auto fail = [&](const char *call, int r) {
    if (r == kStatusNotSupported) {
      unsupported = describe(r);
      return Status::success();
    }
    return Status::error(std::string(call) + ": " + describe(r));
  };
  if (int r = f.descCreate(&p->desc, compute, scale); r != kStatusSuccess)
    return p->desc = nullptr, fail("cublasLtMatmulDescCreate", r);
  int32_t transA = kOpT, transB = kOpN;
  if (int r = f.descSet(p->desc, kDescTransA, &transA, sizeof(transA)); r)
    return fail("cublasLtMatmulDescSetAttribute(TRANSA)", r);
  if (int r = f.descSet(p->desc, kDescTransB, &transB, sizeof(transB)); r)
    return fail("cublasLtMatmulDescSetAttribute(TRANSB)", r);
  uint64_t m = uint64_t(kernel.m), n = uint64_t(kernel.n),
           k = uint64_t(kernel.k);
  struct {
    void **layout;
    int type;
    uint64_t rows, cols;
    int64_t stride;
  } layouts[] = {
      // cuBLASLt's A: our B, a column-major k x n matrix.
      {&p->aLayout, dataType(kernel.b), k, n, int64_t(n * k)},
      // Its B: our A, k x m.
      {&p->bLayout, dataType(kernel.a), k, m, int64_t(m * k)},
      // C = D: our C, n x m.
      {&p->cLayout, dataType(kernel.c), n, m, int64_t(m * n)},
  };
  for (auto &l : layouts) {
    if (int r =
            f.layoutCreate(l.layout, l.type, l.rows, l.cols, int64_t(l.rows));
        r != kStatusSuccess)
      return *l.layout = nullptr, fail("cublasLtMatrixLayoutCreate", r);
    if (kernel.batch == 1)
      continue;
    int32_t count = int32_t(kernel.batch);
    if (int r =
            f.layoutSet(*l.layout, kLayoutBatchCount, &count, sizeof(count));
        r)
      return fail("cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)", r);
    if (int r = f.layoutSet(*l.layout, kLayoutStridedBatchOffset, &l.stride,
                            sizeof(l.stride));
        r)
      return fail("cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)", r);
  }
  void *pref = nullptr;
  if (int r = f.prefCreate(&pref); r != kStatusSuccess)
    return fail("cublasLtMatmulPreferenceCreate", r);
  uint64_t maxWorkspace = workspaceBytes;
  int r = f.prefSet(pref, kPrefMaxWorkspaceBytes, &maxWorkspace,
                    sizeof(maxWorkspace));
  HeuristicResult result{};
  int returned = 0;
  if (r == kStatusSuccess)
    r = f.heuristic(handle, p->desc, p->aLayout, p->bLayout, p->cLayout,
                    p->cLayout, pref, 1, &result, &returned);
  f.prefDestroy(pref);
  if (r != kStatusSuccess)
    return fail("cublasLtMatmulAlgoGetHeuristic", r);
  if (returned == 0) {
    unsupported = "no algorithm";
    return Status::success();
  }
  p->algo = result.algo;
  p->workspaceBytes = result.workspaceSize;
  out = std::move(p);
  return Status::success();
}

Status CublasLt::run(const Plan &plan, CUdeviceptr a, CUdeviceptr b,
                     CUdeviceptr c, CUdeviceptr workspace,
                     size_t workspaceBytes, CUstream stream) const {
  float alphaF = 1, betaF = 0;
  int32_t alphaI = 1, betaI = 0;
  const void *alpha = plan.integer ? static_cast<const void *>(&alphaI)
                                   : static_cast<const void *>(&alphaF);
  const void *beta = plan.integer ? static_cast<const void *>(&betaI)
                                  : static_cast<const void *>(&betaF);
  auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  // Our B is cuBLASLt's A and our A its B (see the file comment).
  int r = api->matmul(handle, plan.desc, alpha, ptr(b), plan.aLayout, ptr(a),
                      plan.bLayout, beta, ptr(c), plan.cLayout, ptr(c),
                      plan.cLayout, &plan.algo, ptr(workspace), workspaceBytes,
                      stream);
  if (r != kStatusSuccess)
    return Status::error("cublasLtMatmul: " + describe(r));
  return Status::success();
}
