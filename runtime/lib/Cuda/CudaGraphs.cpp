//===- CudaGraphs.cpp - A step's launches replayed as CUDA graphs ---------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// CudaGraphRecorder (CudaGraphs.h): records a segment's launches, captures
/// each new structure once, and replays it with updated kernel parameters.
///
//===----------------------------------------------------------------------===//

#include "qtrain/runtime/CudaGraphs.h"

#include <algorithm>
#include <cstring>

using namespace qtrain::rt;

namespace {

/// Parameter buffers of consecutive ops start 16-byte aligned.
constexpr size_t kParamAlign = 16;
/// The most parameters asked for, should a driver never say an index is
/// out of range (a kernel's parameters fill at most 32 KiB).
constexpr size_t kMaxParams = 8192;

} // namespace

Status CudaGraphRecorder::open(const CudaDriver &driver, size_t capacity,
                               std::unique_ptr<CudaGraphRecorder> &out,
                               size_t perStructure) {
  if (!driver.getMissingGraphFunction().empty())
    return Status::error("the CUDA driver " + driver.getPath() + " has no " +
                         driver.getMissingGraphFunction() +
                         " (CUDA graphs need a driver of CUDA 12.4 or later)");
  std::unique_ptr<CudaGraphRecorder> recorder(
      new CudaGraphRecorder(driver, std::max<size_t>(capacity, 1),
                            std::max<size_t>(perStructure, 1)));
  if (Status s = driver.check(
          driver.api().cuStreamCreate(&recorder->stream, kCudaStreamDefault),
          "cuStreamCreate");
      s.failed())
    return s;
  out = std::move(recorder);
  return Status::success();
}

CudaGraphRecorder::~CudaGraphRecorder() {
  clear();
  if (stream)
    (void)driver.api().cuStreamDestroy(stream);
}

void CudaGraphRecorder::destroy(Graph &graph) {
  if (graph.exec)
    (void)driver.api().cuGraphExecDestroy(graph.exec);
  if (graph.graph)
    (void)driver.api().cuGraphDestroy(graph.graph);
  graph.exec = nullptr;
  graph.graph = nullptr;
}

void CudaGraphRecorder::clear() {
  for (auto &[signature, slots] : graphs)
    for (Graph &graph : slots)
      destroy(graph);
  graphs.clear();
  graphCount = 0;
}

void CudaGraphRecorder::reset() {
  ops.clear();
  params.clear();
  signature.clear();
}

Status CudaGraphRecorder::describe(CUfunction function, const Layout *&out) {
  auto it = layouts.find(function);
  if (it != layouts.end()) {
    out = it->second.get();
    return Status::success();
  }
  // The driver's count, not the launch's: gpu-to-llvm passes the number of
  // the launch's operands, and a memref operand is several parameters.
  auto layout = std::make_unique<Layout>();
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    CUresult r = driver.api().cuFuncGetParamInfo(function, i, &offset, &size);
    if (r == kCudaErrorInvalidValue)
      break; // past the last parameter
    if (Status s = driver.check(r, "cuFuncGetParamInfo"); s.failed())
      return Status::error(s.message() + " (parameter " + std::to_string(i) +
                           ")");
    if (i == kMaxParams)
      return Status::error("cuFuncGetParamInfo: a kernel with more than " +
                           std::to_string(kMaxParams) + " parameters");
    layout->offsets.push_back(offset);
    layout->sizes.push_back(size);
    layout->bytes = std::max(layout->bytes, offset + size);
  }
  out = layout.get();
  layouts[function] = std::move(layout);
  return Status::success();
}

Status CudaGraphRecorder::recordKernel(CUfunction function,
                                       const unsigned grid[3],
                                       const unsigned block[3],
                                       unsigned sharedBytes, void **arguments,
                                       size_t count, bool &recorded) {
  recorded = false;
  if (!isRecording())
    return checkLaunch(function, count);
  const Layout *layout = nullptr;
  if (Status s = describe(function, layout); s.failed()) {
    disabledReason = s.message();
    Status launched = launchEagerly();
    reset();
    return launched;
  }
  if (Status s = checkCount(*layout, count); s.failed())
    return s;
  Op op;
  op.function = function;
  std::copy(grid, grid + 3, op.grid);
  std::copy(block, block + 3, op.block);
  op.sharedBytes = sharedBytes;
  op.layout = layout;
  op.paramBegin = (params.size() + kParamAlign - 1) / kParamAlign * kParamAlign;
  params.resize(op.paramBegin + layout->bytes, 0);
  for (size_t i = 0; i < layout->sizes.size(); ++i)
    std::memcpy(params.data() + op.paramBegin + layout->offsets[i],
                arguments[i], layout->sizes[i]);
  signature.push_back(reinterpret_cast<uintptr_t>(function));
  signature.push_back(uint64_t(grid[0]) << 32 | grid[1]);
  signature.push_back(uint64_t(grid[2]) << 32 | block[0]);
  signature.push_back(uint64_t(block[1]) << 32 | block[2]);
  signature.push_back(sharedBytes);
  ops.push_back(std::move(op));
  ++recordedKernels;
  recorded = true;
  return Status::success();
}

Status CudaGraphRecorder::checkCount(const Layout &layout, size_t count) {
  if (layout.sizes.size() == count)
    return Status::success();
  return Status::error(
      "a kernel of the step takes " + std::to_string(layout.sizes.size()) +
      " parameters, but its launch passes " + std::to_string(count) +
      " (the step's host code and its kernels disagree on how memrefs are "
      "passed; compile the bundle again)");
}

Status CudaGraphRecorder::checkLaunch(CUfunction function, size_t count) {
  const Layout *layout = nullptr;
  // A driver that cannot describe the kernel leaves it unchecked.
  if (describe(function, layout).failed())
    return Status::success();
  return checkCount(*layout, count);
}

void CudaGraphRecorder::recordCall(std::vector<uint64_t> key,
                                   std::function<Status(CUstream)> enqueue) {
  // A null function, the key's length, the key: never a kernel's entry.
  signature.push_back(0);
  signature.push_back(key.size());
  signature.insert(signature.end(), key.begin(), key.end());
  Op op;
  op.enqueue = std::move(enqueue);
  op.paramBegin = params.size();
  ops.push_back(std::move(op));
}

void CudaGraphRecorder::pointers(const Op &op,
                                 std::vector<unsigned char> &bytes,
                                 std::vector<void *> &out) const {
  out.clear();
  for (size_t offset : op.layout->offsets)
    out.push_back(bytes.data() + op.paramBegin + offset);
}

Status CudaGraphRecorder::enqueue(const Op &op,
                                  std::vector<void *> &arguments) {
  if (!op.function)
    return op.enqueue(stream);
  pointers(op, params, arguments);
  return driver.check(driver.api().cuLaunchKernel(
                          op.function, op.grid[0], op.grid[1], op.grid[2],
                          op.block[0], op.block[1], op.block[2], op.sharedBytes,
                          stream, arguments.data(), nullptr),
                      "cuLaunchKernel");
}

Status CudaGraphRecorder::launchEagerly() {
  std::vector<void *> arguments;
  for (const Op &op : ops)
    if (Status s = enqueue(op, arguments); s.failed())
      return s;
  return Status::success();
}

Status CudaGraphRecorder::capture(Graph &graph) {
  const CudaDriverApi &f = driver.api();
  if (Status s = driver.check(
          f.cuStreamBeginCapture(stream, kCudaStreamCaptureModeRelaxed),
          "cuStreamBeginCapture");
      s.failed())
    return s;
  Status failure = Status::success();
  std::vector<void *> arguments;
  for (const Op &op : ops) {
    failure = enqueue(op, arguments);
    if (failure.failed())
      break;
    if (!op.function) {
      graph.nodes.push_back(nullptr);
      continue;
    }
    // The kernel just captured is the one node the next would depend on.
    int status = 0;
    const CUgraphNode *dependencies = nullptr;
    size_t count = 0;
    failure =
        driver.check(f.cuStreamGetCaptureInfo(stream, &status, nullptr, nullptr,
                                              &dependencies, nullptr, &count),
                     "cuStreamGetCaptureInfo");
    if (failure.failed())
      break;
    if (count != 1) {
      failure = Status::error("cuStreamGetCaptureInfo: a captured kernel "
                              "left " +
                              std::to_string(count) +
                              " dependencies, not its own node");
      break;
    }
    graph.nodes.push_back(dependencies[0]);
  }
  // The graph stays: its nodes name the kernels to update.
  CUresult ended = f.cuStreamEndCapture(stream, &graph.graph);
  if (failure.failed() || ended != kCudaSuccess) {
    destroy(graph);
    return failure.failed() ? failure
                            : driver.check(ended, "cuStreamEndCapture");
  }
  if (Status s = driver.check(f.cuGraphInstantiate(&graph.exec, graph.graph, 0),
                              "cuGraphInstantiate");
      s.failed()) {
    destroy(graph);
    return s;
  }
  graph.params = params;
  return Status::success();
}

Status CudaGraphRecorder::update(Graph &graph) {
  std::vector<void *> arguments;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op &op = ops[i];
    if (!op.function)
      continue;
    const unsigned char *now = params.data() + op.paramBegin;
    unsigned char *then = graph.params.data() + op.paramBegin;
    if (std::memcmp(now, then, op.layout->bytes) == 0)
      continue;
    pointers(op, params, arguments);
    CudaKernelNodeParams node;
    node.function = op.function;
    std::copy(op.grid, op.grid + 3, node.grid);
    std::copy(op.block, op.block + 3, node.block);
    node.sharedBytes = op.sharedBytes;
    node.params = arguments.data();
    if (Status s = driver.check(driver.api().cuGraphExecKernelNodeSetParams(
                                    graph.exec, graph.nodes[i], &node),
                                "cuGraphExecKernelNodeSetParams");
        s.failed())
      return s;
    std::memcpy(then, now, op.layout->bytes);
    ++nodeUpdates;
  }
  return Status::success();
}

size_t CudaGraphRecorder::differences(const Graph &graph) const {
  size_t count = 0;
  for (const Op &op : ops)
    if (op.function &&
        std::memcmp(params.data() + op.paramBegin,
                    graph.params.data() + op.paramBegin, op.layout->bytes) != 0)
      ++count;
  return count;
}

void CudaGraphRecorder::evictOne() {
  auto oldestEntry = graphs.end();
  size_t oldestSlot = 0;
  for (auto it = graphs.begin(); it != graphs.end(); ++it)
    for (size_t slot = 0; slot < it->second.size(); ++slot)
      if (oldestEntry == graphs.end() ||
          it->second[slot].lastUse < oldestEntry->second[oldestSlot].lastUse) {
        oldestEntry = it;
        oldestSlot = slot;
      }
  if (oldestEntry == graphs.end())
    return;
  destroy(oldestEntry->second[oldestSlot]);
  oldestEntry->second.erase(oldestEntry->second.begin() + oldestSlot);
  if (oldestEntry->second.empty())
    graphs.erase(oldestEntry);
  --graphCount;
}

Status CudaGraphRecorder::flush() {
  if (ops.empty())
    return Status::success();
  // The structure's graph whose parameters differ in the fewest kernels;
  // another is captured while the structure has fewer than its share, so
  // that buffers alternating between steps each get a graph of their own.
  Graph *chosen = nullptr;
  size_t fewest = 0, kept = 0;
  if (auto it = graphs.find(signature); it != graphs.end()) {
    kept = it->second.size();
    for (Graph &graph : it->second)
      if (size_t d = differences(graph); !chosen || d < fewest) {
        chosen = &graph;
        fewest = d;
      }
  }
  Status made = Status::success();
  if (chosen && (fewest == 0 || kept >= perStructure)) {
    if (fewest > 0)
      made = update(*chosen);
  } else {
    Graph graph;
    made = capture(graph);
    if (!made.failed()) {
      if (graphCount >= capacity)
        evictOne();
      std::vector<Graph> &slots = graphs[signature];
      slots.push_back(std::move(graph));
      chosen = &slots.back();
      ++graphCount;
      ++captures;
    }
  }
  if (made.failed()) {
    // The driver cannot run this segment as a graph: run it, and the rest
    // of the run, one launch at a time.
    disabledReason = made.message();
    clear();
    Status launched = launchEagerly();
    reset();
    return launched;
  }
  chosen->lastUse = ++clock;
  Status launched = driver.check(
      driver.api().cuGraphLaunch(chosen->exec, stream), "cuGraphLaunch");
  if (!launched.failed())
    ++graphLaunches;
  reset();
  return launched;
}
