//===- CudaGraphs.h - A step's launches replayed as CUDA graphs -*- C++ -*-===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A step on the GPU launches a hundred or more small kernels; launched one
/// by one, the host's launch latency, not the GPU, bounds a small model's
/// step. CudaGraphRecorder records the launches of a step's *segment* (what
/// the step enqueues between two host waits: usually the whole step) instead
/// of launching them, and at the segment's end (flush()) runs them as one
/// CUDA graph:
///
/// - A segment is identified by its structure: the sequence of kernels with
///   their grid, block and shared memory, and of library calls with their
///   keys (a cuBLASLt product: its shape, encodings and buffers). The first
///   time a structure is seen, the segment is captured on the recorder's
///   stream into a graph and instantiated; every later time, the graph is
///   launched again.
/// - Kernel parameters are compared byte for byte with the graph's. A
///   segment runs on the graph of its structure whose parameters differ in
///   the fewest kernels; when none has the same parameters and the
///   structure has fewer than its share of graphs (16), a new one is captured,
///   else the kernels that differ are set on the nearest graph's nodes
///   (cuGraphExecKernelNodeSetParams) before it is launched. A library
///   call's key holds its buffers, so a moved buffer makes a new structure.
/// - What differs between the segments of one structure: the parameter
///   buffers, which the Trainer alternates between steps, and the
///   constants of the precision (a shared variant's levels and shifts).
///   The values that change every step (the Philox step, the learning
///   rate) are not kernel parameters: the step uploads them
///   (qtrain_cuda_upload, a copy node that reads page-locked memory when
///   the graph runs). So each combination of precision and buffers gets a
///   graph of its own, and a step at a precision seen before launches its
///   graph as it is, with no node update: switching precision (a CPT
///   schedule, LDP's per-site widths) is a lookup, not a recompilation, a
///   capture or an update. At most `capacity` graphs are kept in all; the
///   least recently used one is destroyed first.
///
/// When the driver cannot capture or instantiate a segment, the recorder
/// turns itself off (getDisabledReason() says why), launches the segment
/// one kernel at a time, and launches every later one directly: the step
/// runs the same kernels, only slower. Errors of the launches themselves
/// are returned (the first failing call with the driver's message).
///
/// Parameters are copied by the sizes the driver reports
/// (cuFuncGetParamInfo), so the caller's argument storage may go away
/// after recordKernel() returns.
///
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_RUNTIME_CUDAGRAPHS_H
#define QTRAIN_RUNTIME_CUDAGRAPHS_H

#include "qtrain/runtime/CudaDriver.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace qtrain::rt {

class CudaGraphRecorder {
public:
  /// A recorder on a new stream of the current context. Fails when the
  /// driver lacks a graph function (CudaDriver::getMissingGraphFunction).
  /// At most `capacity` graphs in all, `perStructure` of one structure.
  static Status open(const CudaDriver &driver, size_t capacity,
                     std::unique_ptr<CudaGraphRecorder> &out,
                     size_t perStructure = kDefaultGraphsPerStructure);
  /// Two parameter buffers (the Trainer alternates them) for each of CPT's
  /// six widths from 3 to 8 bits, and some to spare for LDP's combinations.
  static constexpr size_t kDefaultGraphsPerStructure = 16;
  ~CudaGraphRecorder();
  CudaGraphRecorder(const CudaGraphRecorder &) = delete;
  CudaGraphRecorder &operator=(const CudaGraphRecorder &) = delete;

  /// Whether launches are recorded (else the caller launches directly).
  bool isRecording() const { return disabledReason.empty(); }
  /// Empty while recording; else why graphs were turned off.
  const std::string &getDisabledReason() const { return disabledReason; }

  /// Records a launch of `function` with `count` parameters, copied by the
  /// sizes the driver gives, and sets `recorded`. When the recorder is off,
  /// or the driver cannot describe the function's parameters (which turns
  /// it off and launches the segment so far), `recorded` is false and the
  /// caller launches this one itself. Either way a kernel that takes
  /// another number of parameters than `count` is an error (checkLaunch).
  Status recordKernel(CUfunction function, const unsigned grid[3],
                      const unsigned block[3], unsigned sharedBytes,
                      void **params, size_t count, bool &recorded);
  /// Whether `function` takes `count` parameters, as far as the driver
  /// says (cuFuncGetParamInfo). A launch that passes fewer or more would
  /// have the kernel read what was never passed.
  Status checkLaunch(CUfunction function, size_t count);
  /// Turns recording off (`why`: getDisabledReason()); checkLaunch() still
  /// works.
  void disable(std::string why) { disabledReason = std::move(why); }
  /// Records work a library enqueues on a stream: `key` identifies it (the
  /// same key enqueues the same work on the same buffers), `enqueue` does
  /// it on the stream it is given.
  void recordCall(std::vector<uint64_t> key,
                  std::function<Status(CUstream)> enqueue);
  /// Runs what was recorded since the last flush, in order, on the
  /// recorder's stream (which orders itself with the legacy stream), and
  /// returns without waiting for it.
  Status flush();
  /// Destroys the kept graphs (a new context, or to free their memory).
  void clear();

  /// Kernels recorded, graphs launched and captured, kernel nodes whose
  /// parameters were updated, since open().
  int64_t getRecordedKernels() const { return recordedKernels; }
  int64_t getGraphLaunches() const { return graphLaunches; }
  int64_t getCaptures() const { return captures; }
  int64_t getNodeUpdates() const { return nodeUpdates; }
  size_t getGraphCount() const { return graphCount; }

private:
  CudaGraphRecorder(const CudaDriver &driver, size_t capacity,
                    size_t perStructure)
      : driver(driver), capacity(capacity), perStructure(perStructure) {}

  /// Where each parameter of a kernel lies in its parameter buffer.
  struct Layout {
    std::vector<size_t> offsets, sizes;
    size_t bytes = 0;
  };
  /// One recorded launch or library call.
  struct Op {
    CUfunction function = nullptr; // null for a library call
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, sharedBytes = 0;
    const Layout *layout = nullptr;
    size_t paramBegin = 0; // into the segment's parameter bytes
    std::function<Status(CUstream)> enqueue;
  };
  /// A captured graph, kept while its nodes are updated, its instance and
  /// the parameters it was last given.
  struct Graph {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    std::vector<CUgraphNode> nodes; // per op; null for a library call
    std::vector<unsigned char> params;
    uint64_t lastUse = 0;
  };

  Status describe(CUfunction function, const Layout *&out);
  static Status checkCount(const Layout &layout, size_t count);
  /// The parameter pointers of `op` into `bytes`.
  void pointers(const Op &op, std::vector<unsigned char> &bytes,
                std::vector<void *> &out) const;
  /// Enqueues `op` on the stream (a launch, or a library's call).
  Status enqueue(const Op &op, std::vector<void *> &arguments);
  Status launchEagerly();
  Status capture(Graph &graph);
  Status update(Graph &graph);
  /// The kernels whose parameters differ from `graph`'s.
  size_t differences(const Graph &graph) const;
  void destroy(Graph &graph);
  void evictOne();
  void reset();

  const CudaDriver &driver;
  size_t capacity, perStructure;
  CUstream stream = nullptr;
  std::string disabledReason;
  std::unordered_map<CUfunction, std::unique_ptr<Layout>> layouts;

  // The segment being recorded.
  std::vector<Op> ops;
  std::vector<unsigned char> params;
  std::vector<uint64_t> signature;

  /// The graphs of each structure, at most `perStructure`.
  std::map<std::vector<uint64_t>, std::vector<Graph>> graphs;
  size_t graphCount = 0;
  uint64_t clock = 0;
  int64_t recordedKernels = 0, graphLaunches = 0, captures = 0, nodeUpdates = 0;
};

} // namespace qtrain::rt

#endif // QTRAIN_RUNTIME_CUDAGRAPHS_H
