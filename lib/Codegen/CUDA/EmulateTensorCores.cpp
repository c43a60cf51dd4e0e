//===- EmulateTensorCores.cpp - Tensor-core GEMM kernels on the host ------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
//
// The fragment layouts of mma.sync m16n8kK with row-major A and column-major
// B (PTX ISA, "Matrix Fragments for mma.m16n8k8/k16/k32"), in 32-bit words:
// a word holds E = 32 / bits elements along k, element e in bits
// [e * bits, (e + 1) * bits); word w of a row covers k in [E w, E w + E).
// With g = lane / 4 and t = lane % 4:
//   A (16 x K): lane g * 4 + t holds, in register r, row g + 8 (r % 2),
//               word t + 4 (r / 2);
//   B (K x 8):  lane g * 4 + t holds, in register r, column g, word t + 4 r;
//   C, D:       lane g * 4 + t holds element i at row g + 8 (i / 2), column
//               2 t + i % 2.
// So element (row, k) of A is in lane (row % 8) * 4 + w % 4, register
// row / 8 + 2 (w / 4), with w = k / E; element (k, col) of B in lane
// col * 4 + w % 4, register w / 4.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/EmulateTensorCores.h"

#include "qtrain/Conversion/FloatFormatArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::qtrain;

Value mlir::qtrain::decodeGemmElement(OpBuilder &b, Location loc, Value raw,
                                      const GemmKernelSpec &spec,
                                      GemmEncoding encoding) {
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  switch (encoding) {
  case GemmEncoding::F32: {
    if (spec.kind != "tf32")
      return raw;
    // Half an ulp of tf32 added to the magnitude, then truncated: nearest,
    // ties away from zero. NaN stays NaN (the sum could carry it to inf or
    // wrap it to zero).
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), raw);
    Value rounded = arith::AndIOp::create(
        b, loc, arith::AddIOp::create(b, loc, bits, i32(0x1000)),
        i32(int32_t(0xFFFFE000u)));
    Value isNan =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, raw, raw);
    return arith::SelectOp::create(
        b, loc, isNan, raw,
        arith::BitcastOp::create(b, loc, b.getF32Type(), rounded));
  }
  case GemmEncoding::BF16: {
    Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), raw);
    Value bits = arith::ShLIOp::create(b, loc, wide, i32(16));
    return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  }
  case GemmEncoding::S8:
    return arith::ExtSIOp::create(b, loc, b.getI32Type(), raw);
  case GemmEncoding::E4M3:
  case GemmEncoding::E5M2: {
    // The finite codes are those of FP(4, 3, 0) / FP(5, 2, 0); e4m3's
    // S.1111.111 is NaN, e5m2's S.11111.00 is +-inf and S.11111.xx NaN.
    bool e4m3 = encoding == GemmEncoding::E4M3;
    Value code = arith::ExtUIOp::create(b, loc, b.getI32Type(), raw);
    Value value = buildDecodeFloat(b, loc, code,
                                   getFp8CodeFormat(b.getContext(), encoding));
    Value top = arith::AndIOp::create(b, loc, code, i32(e4m3 ? 0x7F : 0x7C));
    Value special = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, top,
                                          i32(e4m3 ? 0x7F : 0x7C));
    auto f32 = [&](float v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
    };
    Value nan = f32(std::numeric_limits<float>::quiet_NaN());
    Value specialValue = nan;
    if (!e4m3) {
      Value isInf = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq,
          arith::AndIOp::create(b, loc, code, i32(0x7F)), i32(0x7C));
      Value negative = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, code, i32(0x80)), i32(0));
      Value inf = arith::SelectOp::create(b, loc, negative, f32(-INFINITY),
                                          f32(INFINITY));
      specialValue = arith::SelectOp::create(b, loc, isInf, inf, nan);
    }
    return arith::SelectOp::create(b, loc, special, specialValue, value);
  }
  default:
    return {};
  }
}

namespace {

/// What one mma.sync reads: four A registers, two B registers, four
/// accumulators; its result is a struct of the four D elements.
struct MmaOperands {
  SmallVector<Value> a, b, c;
};

/// The values a lane's fragment registers are made of, recomputed for
/// another lane of the warp: the ops that depend on the thread id are
/// cloned with the other lane's thread id; what does not depend on it is
/// the same in every lane.
class LaneSlice {
public:
  LaneSlice(Value threadId, gpu::LaunchOp launch)
      : threadId(threadId), launch(launch) {}

  bool dependsOnThread(Value v);
  /// `v` in the lane whose thread id `mapping` maps the thread id to.
  FailureOr<Value> inLane(OpBuilder &b, Value v, IRMapping &mapping);

private:
  /// A load of memory nothing in the launch writes: one of the kernel's
  /// operands (a memref defined outside the launch that no op inside it
  /// stores to), or a load marked invariant (the word loads of A and B).
  bool isReadOnlyLoad(Operation *op);

  Value threadId;
  gpu::LaunchOp launch;
  DenseMap<Value, bool> depends;
};

} // namespace

bool LaneSlice::dependsOnThread(Value v) {
  if (v == threadId)
    return true;
  Operation *op = v.getDefiningOp();
  if (!op) {
    // Block arguments: those from outside the launch and the launch's block
    // ids and sizes are the same in every lane of a warp, and so is the
    // counter of a loop whose bounds are; anything else (a loop-carried value,
    // another region's argument) may differ per lane and cannot be recomputed
    // (inLane then fails).
    auto arg = cast<BlockArgument>(v);
    Operation *owner = arg.getOwner()->getParentOp();
    if (owner == launch || !launch->isAncestor(owner))
      return false;
    auto loop = dyn_cast<scf::ForOp>(owner);
    if (!loop || arg != loop.getInductionVar())
      return true;
    return dependsOnThread(loop.getLowerBound()) ||
           dependsOnThread(loop.getUpperBound()) ||
           dependsOnThread(loop.getStep());
  }
  auto it = depends.find(v);
  if (it != depends.end())
    return it->second;
  // An op without operands is a constant unless it reads a special
  // register (nvvm.read.ptx.sreg.*: the lane id, the clock), which is per
  // lane.
  bool result =
      llvm::any_of(op->getOperands(),
                   [&](Value operand) { return dependsOnThread(operand); }) ||
      op->getNumRegions() != 0 ||
      (op->getNumOperands() == 0 &&
       isa_and_nonnull<NVVM::NVVMDialect>(op->getDialect()));
  depends[v] = result;
  return result;
}

bool LaneSlice::isReadOnlyLoad(Operation *op) {
  if (auto load = dyn_cast<LLVM::LoadOp>(op))
    return load.getInvariant();
  auto load = dyn_cast<memref::LoadOp>(op);
  if (!load)
    return false;
  Value memref = load.getMemRef();
  if (launch->isAncestor(memref.getParentRegion()->getParentOp()))
    return false;
  WalkResult written = launch.walk([&](Operation *inner) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (effects && effects.getEffectOnValue<MemoryEffects::Write>(memref))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !written.wasInterrupted();
}

FailureOr<Value> LaneSlice::inLane(OpBuilder &b, Value v, IRMapping &mapping) {
  if (!dependsOnThread(v))
    return v;
  if (Value mapped = mapping.lookupOrNull(v))
    return mapped;
  Operation *op = v.getDefiningOp();
  if (!op || op->getNumRegions() != 0 || !(isPure(op) || isReadOnlyLoad(op))) {
    (op ? op : v.getParentBlock()->getParentOp())
        ->emitError("qtrain-emulate-gpu: a tensor-core register is not a "
                    "function of the thread id, read-only loads and pure ops; "
                    "it cannot be recomputed for the other lanes");
    return failure();
  }
  for (Value operand : op->getOperands())
    if (failed(inLane(b, operand, mapping)))
      return failure();
  Operation *clone = b.clone(*op, mapping);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

static std::optional<MmaOperands> matchMma(Operation *op) {
  if (auto mma = dyn_cast<NVVM::MmaOp>(op))
    return MmaOperands{SmallVector<Value>(mma.getOperandA()),
                       SmallVector<Value>(mma.getOperandB()),
                       SmallVector<Value>(mma.getOperandC())};
  auto inlineAsm = dyn_cast<LLVM::InlineAsmOp>(op);
  if (!inlineAsm || !inlineAsm.getAsmString().starts_with("mma.sync.") ||
      inlineAsm.getNumOperands() != 10 || inlineAsm.getNumResults() != 1)
    return std::nullopt;
  ValueRange operands = inlineAsm.getOperands();
  return MmaOperands{SmallVector<Value>(operands.take_front(4)),
                     SmallVector<Value>(operands.slice(4, 2)),
                     SmallVector<Value>(operands.drop_front(6))};
}

/// Replaces `op`, an mma.sync of `spec`'s shape, by the lane's four
/// elements of D computed on the host.
static LogicalResult emulateMma(RewriterBase &rewriter, Operation *op,
                                const MmaOperands &mma, Value threadId,
                                Value aScratch, Value bScratch,
                                gpu::LaunchOp launch,
                                const GemmKernelSpec &spec) {
  Location loc = op->getLoc();
  OpBuilder &b = rewriter;
  b.setInsertionPoint(op);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto i32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  };
  int64_t bits = spec.kind == "tf32" ? 32 : spec.kind == "bf16" ? 16 : 8;
  int64_t perWord = 32 / bits;
  bool isInt = spec.c == GemmEncoding::S32;

  // The warp's registers as this thread sees them, in its rows of the
  // block's scratch: [thread][lane][register].
  auto aRegs = [&](Value lane, Value reg) {
    return SmallVector<Value>{threadId, lane, reg};
  };
  auto bRegs = aRegs;
  Value lane = arith::RemUIOp::create(b, loc, threadId, index(32));
  Value warpBase = arith::SubIOp::create(b, loc, threadId, lane);
  LaneSlice slice(threadId, launch);
  bool failedLane = false;
  scf::ForOp::create(
      b, loc, index(0), index(32), index(1), ValueRange(),
      [&](OpBuilder &, Location, Value other, ValueRange) {
        IRMapping mapping;
        mapping.map(threadId, arith::AddIOp::create(b, loc, warpBase, other));
        auto save = [&](ArrayRef<Value> regs, Value buffer) {
          for (auto [r, reg] : llvm::enumerate(regs)) {
            FailureOr<Value> value = slice.inLane(b, reg, mapping);
            if (failed(value)) {
              failedLane = true;
              return;
            }
            memref::StoreOp::create(b, loc, *value, buffer,
                                    aRegs(other, index(r)));
          }
        };
        save(mma.a, aScratch);
        save(mma.b, bScratch);
        scf::YieldOp::create(b, loc);
      });
  if (failedLane)
    return failure();

  // Element e of a register word, decoded as the kind multiplies it.
  auto element = [&](Value word, Value e, GemmEncoding encoding) -> Value {
    if (bits == 32)
      return arith::BitcastOp::create(
          b, loc, b.getF32Type(),
          arith::AndIOp::create(b, loc, word, i32(int32_t(0xFFFFE000u))));
    Value shift = arith::MulIOp::create(
        b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), e),
        i32(bits));
    Value raw =
        arith::TruncIOp::create(b, loc, b.getIntegerType(bits),
                                arith::ShRUIOp::create(b, loc, word, shift));
    return decodeGemmElement(b, loc, raw, spec, encoding);
  };
  Value g = arith::DivUIOp::create(b, loc, lane, index(4));
  Value t = arith::RemUIOp::create(b, loc, lane, index(4));
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i) {
    Value col = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, t, index(2)), index(i % 2));
    auto sum = scf::ForOp::create(
        b, loc, index(0), index(spec.kStep()), index(1), ValueRange{mma.c[i]},
        [&](OpBuilder &, Location, Value kk, ValueRange acc) {
          Value w = arith::DivUIOp::create(b, loc, kk, index(perWord));
          Value e = arith::RemUIOp::create(b, loc, kk, index(perWord));
          Value wLane = arith::RemUIOp::create(b, loc, w, index(4));
          Value wReg = arith::DivUIOp::create(b, loc, w, index(4));
          // A: row g + 8 (i / 2) is in lane g * 4 + w % 4, register
          // i / 2 + 2 (w / 4). B: column col in lane col * 4 + w % 4,
          // register w / 4.
          Value aLane = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, g, index(4)), wLane);
          Value aReg = arith::AddIOp::create(
              b, loc, index(i / 2),
              arith::MulIOp::create(b, loc, wReg, index(2)));
          Value bLane = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, col, index(4)), wLane);
          Value av = element(
              memref::LoadOp::create(b, loc, aScratch, aRegs(aLane, aReg)), e,
              spec.a);
          Value bv = element(
              memref::LoadOp::create(b, loc, bScratch, bRegs(bLane, wReg)), e,
              spec.b);
          Value next =
              isInt
                  ? arith::AddIOp::create(b, loc, acc[0],
                                          arith::MulIOp::create(b, loc, av, bv))
                        .getResult()
                  : arith::AddFOp::create(b, loc, acc[0],
                                          arith::MulFOp::create(b, loc, av, bv))
                        .getResult();
          scf::YieldOp::create(b, loc, next);
        });
    d.push_back(sum.getResult(0));
  }
  Type structType = op->getResult(0).getType();
  Value result = LLVM::UndefOp::create(b, loc, structType);
  for (int64_t i = 0; i < 4; ++i)
    result = LLVM::InsertValueOp::create(b, loc, result, d[i], i);
  rewriter.replaceOp(op, result);
  return success();
}

LogicalResult mlir::qtrain::emulateTensorCores(RewriterBase &rewriter,
                                               gpu::LaunchOp launch,
                                               const GemmKernelSpec &spec) {
  Value threadId = launch.getThreadIds().x;
  SmallVector<NVVM::ConvertFloatToTF32Op> conversions;
  launch.getBody().walk([&](NVVM::ConvertFloatToTF32Op convert) {
    conversions.push_back(convert);
  });
  // cvt.rna.tf32.f32 first: the registers the mma slices clone use it.
  for (NVVM::ConvertFloatToTF32Op convert : conversions) {
    rewriter.setInsertionPoint(convert);
    Value rounded = decodeGemmElement(
        rewriter, convert.getLoc(), convert.getSrc(), spec, GemmEncoding::F32);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(
        convert, rewriter.getI32Type(), rounded);
  }
  SmallVector<std::pair<Operation *, MmaOperands>> mmas;
  launch.getBody().walk([&](Operation *op) {
    if (std::optional<MmaOperands> mma = matchMma(op))
      mmas.push_back({op, *mma});
  });
  // On the host, !invariant.load would claim that the host program never
  // writes the operands, which it does between launches: dropped once the
  // slices no longer need it.
  auto dropInvariant = [&] {
    launch.walk([](LLVM::LoadOp load) { load.setInvariant(false); });
  };
  if (mmas.empty()) {
    dropInvariant();
    return success();
  }
  // Scratch for the registers: a workgroup buffer, rows per thread (the
  // host runs a block's threads one after another, or in parallel).
  Location loc = launch.getLoc();
  Value aScratch = launch.addWorkgroupAttribution(
      MemRefType::get({GemmKernelSpec::kThreads, 32, 4}, rewriter.getI32Type()),
      loc);
  Value bScratch = launch.addWorkgroupAttribution(
      MemRefType::get({GemmKernelSpec::kThreads, 32, 2}, rewriter.getI32Type()),
      loc);
  for (auto &[op, mma] : mmas)
    if (failed(emulateMma(rewriter, op, mma, threadId, aScratch, bScratch,
                          launch, spec)))
      return failure();
  dropInvariant();
  return success();
}
