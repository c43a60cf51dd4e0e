//===- GemmKernel.cpp - Tensor-core GEMM kernels per precision -----------===//
//
// Part of the qtrain project.
//
//===----------------------------------------------------------------------===//
//
// The fragment layouts below are those of PTX's mma.sync for each shape
// (PTX ISA, "Matrix Fragments for mma.m16n8k*"): with g = lane / 4 and
// t = lane % 4, a 32-bit register holds E = 32 / bits consecutive elements
// along k, element e in bits [e * bits, (e + 1) * bits);
//   A register r (of 4): row g + 8 * (r % 2), k E * t + e + S * (r / 2)
//   B register r (of 2): col g,               k E * t + e + S * r
//   C element i (of 4):  row g + 8 * (i / 2), col 2 * t + i % 2
// with S = kStep / 2 (tf32 m16n8k8: E 1, S 4; bf16 m16n8k16: E 2, S 8;
// 8-bit m16n8k32: E 4, S 16).
//
//===----------------------------------------------------------------------===//

#include "qtrain/Codegen/CUDA/GemmKernel.h"

#include "QTrain/QTrainAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::qtrain;

std::optional<Fp8Operand> mlir::qtrain::getFp8Operand(FloatFormatAttr format,
                                                      Fp8Scale scale) {
  if (!format)
    return std::nullopt;
  // fp8's largest value and its smallest normal exponent.
  Fp8Operand operand;
  double fp8Max;
  int fp8MinNormal;
  if (format.getExponent() == 4 && format.getMantissa() == 3) {
    operand.encoding = GemmEncoding::E4M3;
    fp8Max = 448;
    fp8MinNormal = -6;
  } else if (format.getExponent() == 5 && format.getMantissa() == 2) {
    operand.encoding = GemmEncoding::E5M2;
    fp8Max = 57344;
    fp8MinNormal = -14;
  } else {
    return std::nullopt;
  }
  double formatMax = (2.0 - std::ldexp(1.0, -int(format.getMantissa()))) *
                     std::ldexp(1.0, format.getMaxExponent());
  if (scale == Fp8Scale::Exact) {
    operand.scaleExponent = fp8MinNormal - format.getMinNormalExponent();
  } else {
    // The largest s with formatMax * 2^s <= fp8Max.
    operand.scaleExponent = int(std::floor(std::log2(fp8Max / formatMax)));
  }
  // Both have m mantissa bits: fp8's grid, scaled back, is as fine as the
  // format's wherever fp8's normals start no higher than the format's.
  int scaledMinNormal = fp8MinNormal - operand.scaleExponent;
  operand.exactFrom = scaledMinNormal <= format.getMinNormalExponent()
                          ? 0.0
                          : std::ldexp(1.0, scaledMinNormal);
  operand.exactTo =
      std::min(formatMax, std::ldexp(fp8Max, -operand.scaleExponent));
  return operand;
}

bool mlir::qtrain::isBf16Exact(FloatFormatAttr format) {
  // bf16: 7 mantissa bits, normals from 2^-126, subnormals in steps of
  // 2^-133, finite up to 2^127 binades.
  return format && format.getMantissa() <= 7 &&
         format.getMinNormalExponent() >= -126 &&
         format.getMinNormalExponent() - int(format.getMantissa()) >= -133 &&
         format.getMaxExponent() <= 127;
}

FloatFormatAttr mlir::qtrain::getFp8CodeFormat(MLIRContext *ctx,
                                               GemmEncoding encoding) {
  if (encoding == GemmEncoding::E4M3)
    return FloatFormatAttr::get(ctx, 4, 3, 0, /*saturate=*/true);
  return FloatFormatAttr::get(ctx, 5, 2, 0, /*saturate=*/false);
}

StringRef mlir::qtrain::stringifyGemmEncoding(GemmEncoding encoding) {
  switch (encoding) {
  case GemmEncoding::F32:
    return "f32";
  case GemmEncoding::BF16:
    return "bf16";
  case GemmEncoding::E4M3:
    return "e4m3";
  case GemmEncoding::E5M2:
    return "e5m2";
  case GemmEncoding::S8:
    return "s8";
  case GemmEncoding::S32:
    return "s32";
  }
  return "?";
}

Type mlir::qtrain::getGemmStorageType(MLIRContext *ctx, GemmEncoding encoding) {
  switch (encoding) {
  case GemmEncoding::F32:
    return Float32Type::get(ctx);
  case GemmEncoding::BF16:
    return IntegerType::get(ctx, 16);
  case GemmEncoding::E4M3:
  case GemmEncoding::E5M2:
  case GemmEncoding::S8:
    return IntegerType::get(ctx, 8);
  case GemmEncoding::S32:
    return IntegerType::get(ctx, 32);
  }
  return {};
}

ArrayRef<StringRef> mlir::qtrain::gemmKernelKinds() {
  static const StringRef kinds[] = {"f32", "tf32", "bf16", "fp8", "i8"};
  return kinds;
}

FailureOr<GemmKernelSpec> GemmKernelSpec::get(StringRef kind, int64_t batch,
                                              int64_t m, int64_t n, int64_t k,
                                              bool aIsError, bool bIsError) {
  GemmKernelSpec spec;
  spec.kind = kind.str();
  spec.batch = batch;
  spec.m = m;
  spec.n = n;
  spec.k = k;
  if (kind == "f32" || kind == "tf32") {
    spec.a = spec.b = spec.c = GemmEncoding::F32;
  } else if (kind == "bf16") {
    spec.a = spec.b = GemmEncoding::BF16;
    spec.c = GemmEncoding::F32;
  } else if (kind == "fp8") {
    spec.a = aIsError ? GemmEncoding::E5M2 : GemmEncoding::E4M3;
    spec.b = bIsError ? GemmEncoding::E5M2 : GemmEncoding::E4M3;
    spec.c = GemmEncoding::F32;
  } else if (kind == "i8") {
    spec.a = spec.b = GemmEncoding::S8;
    spec.c = GemmEncoding::S32;
  } else {
    return failure();
  }
  // Split k when the tiles of C leave most of the GPU idle and k is long
  // enough to share: chunks of whole tensor-core steps.
  spec.kChunk = k;
  int64_t tiles = spec.tilesX() * spec.tilesY() * batch;
  int64_t ways =
      std::min<int64_t>({int64_t(llvm::divideCeil(kSplitBlocks, tiles)),
                         kMaxSplits, k / kMinChunk});
  if (tiles < kSplitBlocks && ways > 1) {
    // Chunks of whole steps; the f32 kernel reads four terms at a time
    // where k allows it.
    int64_t align = kind == "f32" ? (k % 4 == 0 ? 4 : 1) : spec.kStep();
    spec.kChunk = llvm::alignTo(llvm::divideCeil(k, ways), align);
    spec.splits = llvm::divideCeil(k, spec.kChunk);
  }
  return spec;
}

int64_t GemmKernelSpec::tileN() const {
  if (kind == "f32")
    return 32;
  return 8 * std::min<int64_t>(4, llvm::divideCeil(n, 8));
}

int64_t GemmKernelSpec::kStep() const {
  if (kind == "tf32")
    return 8;
  if (kind == "bf16")
    return 16;
  if (kind == "fp8" || kind == "i8")
    return 32;
  return 1;
}

std::string GemmKernelSpec::name() const {
  std::string name = llvm::formatv(
      "qtrain_gemm_{0}_{1}x{2}_b{3}_m{4}_n{5}_k{6}", kind,
      stringifyGemmEncoding(a), stringifyGemmEncoding(b), batch, m, n, k);
  if (splits > 1)
    name += llvm::formatv("_s{0}", splits).str();
  return name;
}

DictionaryAttr GemmKernelSpec::toAttr(Builder &builder) const {
  auto encoding = [&](GemmEncoding e) {
    return builder.getStringAttr(stringifyGemmEncoding(e));
  };
  return builder.getDictionaryAttr(
      {builder.getNamedAttr("kind", builder.getStringAttr(kind)),
       builder.getNamedAttr("a", encoding(a)),
       builder.getNamedAttr("b", encoding(b)),
       builder.getNamedAttr("c", encoding(c)),
       builder.getNamedAttr("batch", builder.getI64IntegerAttr(batch)),
       builder.getNamedAttr("m", builder.getI64IntegerAttr(m)),
       builder.getNamedAttr("n", builder.getI64IntegerAttr(n)),
       builder.getNamedAttr("k", builder.getI64IntegerAttr(k)),
       builder.getNamedAttr("splits", builder.getI64IntegerAttr(splits)),
       builder.getNamedAttr("k_chunk", builder.getI64IntegerAttr(kChunk)),
       builder.getNamedAttr("grid", builder.getI64ArrayAttr(grid())),
       builder.getNamedAttr("block", builder.getI64ArrayAttr(block()))});
}

FailureOr<GemmKernelSpec> GemmKernelSpec::fromAttr(DictionaryAttr attr) {
  if (!attr)
    return failure();
  auto kind = attr.getAs<StringAttr>("kind");
  auto a = attr.getAs<StringAttr>("a"), b = attr.getAs<StringAttr>("b");
  auto integer = [&](StringRef key) -> int64_t {
    auto v = attr.getAs<IntegerAttr>(key);
    return v ? v.getInt() : 0;
  };
  int64_t batch = integer("batch"), m = integer("m"), n = integer("n"),
          k = integer("k");
  if (!kind || !a || !b || batch < 1 || m < 1 || n < 1 || k < 1)
    return failure();
  FailureOr<GemmKernelSpec> spec =
      get(kind.getValue(), batch, m, n, k, a.getValue() == "e5m2",
          b.getValue() == "e5m2");
  // The split is the shape's; a description that says otherwise is not
  // this builder's.
  if (failed(spec) || stringifyGemmEncoding(spec->a) != a.getValue() ||
      stringifyGemmEncoding(spec->b) != b.getValue() ||
      integer("splits") != spec->splits || integer("k_chunk") != spec->kChunk)
    return failure();
  return spec;
}

/// The fences of the split-k protocol order memory between the blocks of
/// one kernel on one GPU: device scope (fence.acq_rel.gpu) is enough.
static constexpr llvm::StringLiteral kDeviceScope = "device";

namespace {

/// Builds one kernel body; `b` sits at the start of the kernel's block.
class GemmBuilder {
public:
  GemmBuilder(OpBuilder &b, Location loc, const GemmKernelSpec &spec,
              gpu::GPUFuncOp func)
      : b(b), loc(loc), spec(spec), func(func), aArg(func.getArgument(0)),
        bArg(func.getArgument(1)), cArg(func.getArgument(2)) {}

  void build();

private:
  /// One element of C a thread holds: its row, column and value.
  struct Output {
    Value row, col, value;
  };

  OpBuilder &b;
  Location loc;
  const GemmKernelSpec &spec;
  gpu::GPUFuncOp func;
  Value aArg, bArg, cArg;
  // Thread coordinates.
  Value tid, g, t, row0, col0, aBase, bBase, cBase;
  // The block's batch element and split, and the split's first term.
  Value batchIndex, split, kBegin;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, index(y)) : x; }
  Value mul(Value x, int64_t y) { return y == 1 ? x : mul(x, index(y)); }
  Value minIdx(Value x, int64_t y) {
    return arith::MinUIOp::create(b, loc, x, index(y));
  }
  Value lessThan(Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 index(y));
  }

  /// Element (row, kk) of a [rows, k] operand at `base` as its raw bits
  /// (i8, i16, or f32 rounded to tf32 as i32); rows are clamped (their
  /// results are not stored), k past the end reads 0.
  Value loadElement(Value memref, Value base, Value row, int64_t rows,
                    Value kk);
  /// A `type` at element `offset` of a kernel operand (elements of
  /// `elementBytes`), loaded through its device pointer with `alignment`
  /// and as read-only (ld.global.nc): the operands are device allocations,
  /// 256-byte aligned, which the kernel only reads.
  Value loadGlobal(Value memref, Value offset, int64_t elementBytes, Type type,
                   int64_t alignment);
  /// The E = `perRegister` elements (row, kFirst..kFirst + E - 1) of an
  /// operand with k a multiple of E, as one 32-bit load.
  Value loadWord(Value memref, Value base, Value row, int64_t rows,
                 Value kFirst, int64_t perRegister);
  /// One 32-bit fragment register: E consecutive elements along k.
  Value loadRegister(Value memref, Value base, Value row, int64_t rows,
                     Value kFirst);
  /// A step of k's fragment registers: A's four, then two of B per 16 x 8
  /// tile.
  struct Fragments {
    SmallVector<Value> a, b;
  };
  /// The registers of the step of k at `k0`.
  Fragments loadStep(Value k0);
  /// The accumulators (4 per 16 x 8 tile) after one step's products.
  SmallVector<Value> mmaStep(const Fragments &fragments, ValueRange acc);
  /// The accumulators after `count` steps from `k0`, their loads first.
  SmallVector<Value> mmaSteps(Value k0, int64_t count, ValueRange acc);
  Value mma(ValueRange aRegs, ValueRange bRegs, ValueRange acc,
            SmallVectorImpl<Value> &out);
  /// Whether steps of k reach past k: a tail, or a last split shorter
  /// than the others.
  bool readsPastK() const {
    return spec.k % spec.kStep() != 0 ||
           spec.splits * spec.kChunk !=
               int64_t(llvm::alignTo(spec.k, spec.kStep()));
  }
  /// The block's batch element, split and bases from blockIdx.z.
  void setUpBlock();
  /// The end of the block's terms (the f32 kernel's split of k).
  Value kEnd();
  void buildTensorCore();
  void buildSimt();
  void store(Value row, Value col, Value value);
  /// Writes the thread's `outputs` to C; when k is split, through the
  /// workspace and the tile's last block.
  void finish(ArrayRef<Output> outputs);
  /// The split's values into the workspace; whether this block finished
  /// the tile last (an i1 every thread reads after a barrier).
  Value storeSplit(ArrayRef<Output> outputs, Value partials, Value counters,
                   Value tile);
  /// Every split's values of `outputs` summed in split order.
  SmallVector<Value> sumSplits(ArrayRef<Output> outputs, Value partials);
  /// The kernel's zero-initialized global `suffix` of `size` `type`s.
  Value global(StringRef suffix, int64_t size, Type type);
};

} // namespace

Value GemmBuilder::loadElement(Value memref, Value base, Value row,
                               int64_t rows, Value kk) {
  Value r = minIdx(row, rows - 1);
  Value kc = minIdx(kk, spec.k - 1);
  Value offset = add(base, add(mul(r, spec.k), kc));
  Value value = memref::LoadOp::create(b, loc, memref, offset);
  Value zero;
  if (spec.kind == "tf32") {
    // cvt.rna.tf32.f32: nearest, ties away from zero (the mma reads the
    // register's top 19 bits).
    value = NVVM::ConvertFloatToTF32Op::create(
        b, loc, b.getI32Type(), value, NVVM::FPRoundingMode::RNA,
        NVVM::SaturationMode::NONE, /*relu=*/false);
    zero = i32(0);
  } else {
    zero = arith::ConstantIntOp::create(b, loc, value.getType(), 0);
  }
  if (!readsPastK())
    return value;
  return arith::SelectOp::create(b, loc, lessThan(kk, spec.k), value, zero);
}

Value GemmBuilder::loadGlobal(Value memref, Value offset, int64_t elementBytes,
                              Type type, int64_t alignment) {
  Value bytes = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                           mul(offset, elementBytes));
  auto globalPtr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref));
  Value pointer = LLVM::IntToPtrOp::create(b, loc, globalPtr, address);
  Value at = LLVM::GEPOp::create(b, loc, globalPtr, b.getI8Type(), pointer,
                                 ArrayRef<LLVM::GEPArg>{bytes},
                                 LLVM::GEPNoWrapFlags::inbounds);
  return LLVM::LoadOp::create(b, loc, type, at, alignment,
                              /*isVolatile=*/false, /*isNonTemporal=*/false,
                              /*isInvariant=*/true);
}

Value GemmBuilder::loadWord(Value memref, Value base, Value row, int64_t rows,
                            Value kFirst, int64_t perRegister) {
  // The register's elements are consecutive in the row and, with k a
  // multiple of their count, a 4-byte aligned word (the buffers are device
  // allocations, 256-byte aligned): one load, little-endian as the
  // register's layout, instead of one per element. A and B are read-only
  // here (ld.global.nc).
  Value r = minIdx(row, rows - 1);
  Value kc = minIdx(kFirst, spec.k - perRegister);
  Value offset = add(base, add(mul(r, spec.k), kc));
  Value word = loadGlobal(memref, offset, 4 / perRegister, b.getI32Type(), 4);
  if (!readsPastK())
    return word;
  // Past k: every element of the word is (k is a multiple of their count).
  return arith::SelectOp::create(b, loc, lessThan(kFirst, spec.k), word,
                                 i32(0));
}

Value GemmBuilder::loadRegister(Value memref, Value base, Value row,
                                int64_t rows, Value kFirst) {
  int64_t bits = spec.kind == "tf32" ? 32 : spec.kind == "bf16" ? 16 : 8;
  int64_t perRegister = 32 / bits;
  if (bits < 32 && spec.k % perRegister == 0)
    return loadWord(memref, base, row, rows, kFirst, perRegister);
  Value reg;
  for (int64_t e = 0; e < perRegister; ++e) {
    Value element = loadElement(memref, base, row, rows, add(kFirst, e));
    if (bits < 32)
      element = arith::ExtUIOp::create(b, loc, b.getI32Type(), element);
    if (e)
      element = arith::ShLIOp::create(b, loc, element, i32(e * bits));
    reg =
        reg ? arith::OrIOp::create(b, loc, reg, element).getResult() : element;
  }
  return reg;
}

Value GemmBuilder::mma(ValueRange aRegs, ValueRange bRegs, ValueRange acc,
                       SmallVectorImpl<Value> &out) {
  bool isInt = spec.kind == "i8";
  Type accType = isInt ? Type(b.getI32Type()) : Type(b.getF32Type());
  auto resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(4, accType));
  Value result;
  if (spec.kind == "fp8") {
    // MLIR's nvvm.mma.sync has no dense fp8 shape (sm_89+ PTX has
    // m16n8k32 for e4m3/e5m2 in any pairing): the instruction itself.
    std::string asmText =
        ("mma.sync.aligned.m16n8k32.row.col.f32." +
         stringifyGemmEncoding(spec.a) + "." + stringifyGemmEncoding(spec.b) +
         ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};")
            .str();
    SmallVector<Value> operands(aRegs);
    operands.append(bRegs.begin(), bRegs.end());
    operands.append(acc.begin(), acc.end());
    result =
        LLVM::InlineAsmOp::create(
            b, loc, resultType, operands, asmText,
            "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", /*has_side_effects=*/false,
            /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
            LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
            /*operand_attrs=*/ArrayAttr())
            .getResult(0);
  } else {
    NVVM::MMATypes type = spec.kind == "tf32"   ? NVVM::MMATypes::tf32
                          : spec.kind == "bf16" ? NVVM::MMATypes::bf16
                                                : NVVM::MMATypes::s8;
    int64_t shape[] = {16, 8, spec.kStep()};
    std::optional<NVVM::MMAIntOverflow> overflow;
    if (isInt)
      overflow = NVVM::MMAIntOverflow::wrapped;
    result =
        NVVM::MmaOp::create(b, loc, resultType, aRegs, bRegs, acc, shape,
                            /*b1Op=*/std::nullopt, overflow,
                            std::array<NVVM::MMATypes, 2>{type, type},
                            std::array<NVVM::MMALayout, 2>{
                                NVVM::MMALayout::row, NVVM::MMALayout::col});
  }
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
  return result;
}

GemmBuilder::Fragments GemmBuilder::loadStep(Value k0) {
  int64_t bits = spec.kind == "tf32" ? 32 : spec.kind == "bf16" ? 16 : 8;
  int64_t perRegister = 32 / bits, half = spec.kStep() / 2;
  Value kLane = add(k0, mul(t, perRegister));
  Fragments fragments;
  for (int64_t r = 0; r < 4; ++r)
    fragments.a.push_back(loadRegister(aArg, aBase,
                                       add(add(row0, g), 8 * (r % 2)), spec.m,
                                       add(kLane, half * (r / 2))));
  for (int64_t s = 0; s < spec.tileN() / 8; ++s) {
    Value col = add(add(col0, g), 8 * s);
    for (int64_t r = 0; r < 2; ++r)
      fragments.b.push_back(
          loadRegister(bArg, bBase, col, spec.n, add(kLane, half * r)));
  }
  return fragments;
}

SmallVector<Value> GemmBuilder::mmaStep(const Fragments &fragments,
                                        ValueRange acc) {
  SmallVector<Value> out;
  for (int64_t s = 0; s < spec.tileN() / 8; ++s)
    mma(fragments.a, ArrayRef<Value>(fragments.b).slice(2 * s, 2),
        acc.slice(4 * s, 4), out);
  return out;
}

SmallVector<Value> GemmBuilder::mmaSteps(Value k0, int64_t count,
                                         ValueRange acc) {
  // All the steps' loads first: they are independent of the products, so
  // `count` steps' loads are in flight at once.
  SmallVector<Fragments> fragments;
  for (int64_t u = 0; u < count; ++u)
    fragments.push_back(loadStep(add(k0, u * spec.kStep())));
  SmallVector<Value> next(acc);
  for (const Fragments &step : fragments)
    next = mmaStep(step, next);
  return next;
}

void GemmBuilder::store(Value row, Value col, Value value) {
  Value inside = arith::AndIOp::create(b, loc, lessThan(row, spec.m),
                                       lessThan(col, spec.n));
  auto ifOp = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value offset = add(cBase, add(mul(row, spec.n), col));
  memref::StoreOp::create(b, loc, value, cArg, offset);
}

void GemmBuilder::setUpBlock() {
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bz = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  batchIndex = bz;
  kBegin = index(0);
  if (spec.splits > 1) {
    batchIndex = arith::DivUIOp::create(b, loc, bz, index(spec.splits));
    split = arith::RemUIOp::create(b, loc, bz, index(spec.splits));
    kBegin = mul(split, spec.kChunk);
  }
  aBase = mul(batchIndex, spec.m * spec.k);
  bBase = mul(batchIndex, spec.n * spec.k);
  cBase = mul(batchIndex, spec.m * spec.n);
}

Value GemmBuilder::kEnd() {
  if (spec.splits == 1)
    return index(spec.k);
  return minIdx(add(kBegin, spec.kChunk), spec.k);
}

void GemmBuilder::buildTensorCore() {
  setUpBlock();
  Value warp = arith::DivUIOp::create(b, loc, tid, index(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, index(32));
  g = arith::DivUIOp::create(b, loc, lane, index(4));
  t = arith::RemUIOp::create(b, loc, lane, index(4));
  row0 = add(mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
                 GemmKernelSpec::kTileM),
             mul(warp, 16));
  col0 = mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), spec.tileN());

  bool isInt = spec.kind == "i8";
  Value zero = isInt ? i32(0)
                     : arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                      APFloat(0.0f))
                           .getResult();
  SmallVector<Value> init(4 * (spec.tileN() / 8), zero);
  // Every split runs the same number of steps (the last one's past k read
  // zeros), kUnroll at a time with their loads first, then the rest.
  constexpr int64_t kUnroll = 4;
  int64_t steps = llvm::divideCeil(spec.kChunk, spec.kStep());
  int64_t unrolled = steps / kUnroll * kUnroll;
  SmallVector<Value> acc(init);
  if (unrolled) {
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(unrolled * spec.kStep()),
        index(kUnroll * spec.kStep()), init,
        [&](OpBuilder &, Location, Value step, ValueRange acc) {
          scf::YieldOp::create(b, loc,
                               mmaSteps(add(kBegin, step), kUnroll, acc));
        });
    acc.assign(loop.getResults().begin(), loop.getResults().end());
  }
  if (steps > unrolled)
    acc = mmaSteps(add(kBegin, unrolled * spec.kStep()), steps - unrolled, acc);
  SmallVector<Output> outputs;
  for (int64_t s = 0; s < spec.tileN() / 8; ++s)
    for (int64_t i = 0; i < 4; ++i)
      outputs.push_back({add(add(row0, g), 8 * (i / 2)),
                         add(add(add(col0, mul(t, 2)), 8 * s), i % 2),
                         acc[4 * s + i]});
  finish(outputs);
}

void GemmBuilder::buildSimt() {
  // Thread (w, l) of the block: column col0 + l, rows row0 + 16 w + r.
  setUpBlock();
  Value warp = arith::DivUIOp::create(b, loc, tid, index(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, index(32));
  Value rowBase = add(mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
                          GemmKernelSpec::kTileM),
                      mul(warp, 16));
  Value col =
      add(mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), spec.tileN()),
          lane);
  Value bRow = add(bBase, mul(minIdx(col, spec.n - 1), spec.k));
  SmallVector<Value> aRows;
  for (int64_t r = 0; r < 16; ++r)
    aRows.push_back(
        add(aBase, mul(minIdx(add(rowBase, r), spec.m - 1), spec.k)));
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  SmallVector<Value> init(16, zero);
  // Sums in k order, one fused multiply-add per term. With k a multiple of
  // 4 (rows 16-byte aligned), four terms of a row are one 16-byte load.
  bool quads = spec.k % 4 == 0 && spec.kChunk % 4 == 0;
  auto loop = scf::ForOp::create(
      b, loc, kBegin, kEnd(), index(quads ? 4 : 1), init,
      [&](OpBuilder &, Location, Value kk, ValueRange acc) {
        auto terms = [&](Value memref, Value offset) {
          SmallVector<Value> values;
          if (!quads) {
            values.push_back(memref::LoadOp::create(b, loc, memref, offset));
            return values;
          }
          Value quad = loadGlobal(memref, offset, 4,
                                  VectorType::get({4}, b.getF32Type()), 16);
          for (int64_t j = 0; j < 4; ++j)
            values.push_back(
                LLVM::ExtractElementOp::create(b, loc, quad, i32(j)));
          return values;
        };
        SmallVector<Value> bv = terms(bArg, add(bRow, kk));
        SmallVector<SmallVector<Value>> av;
        for (int64_t r = 0; r < 16; ++r)
          av.push_back(terms(aArg, add(aRows[r], kk)));
        SmallVector<Value> next(acc);
        for (size_t j = 0; j < bv.size(); ++j)
          for (int64_t r = 0; r < 16; ++r)
            // llvm.intr.fma (fma.rn.f32): math.fma would become a call of
            // libdevice's __nv_fmaf, which the module does not link.
            next[r] = LLVM::FMAOp::create(b, loc, av[r][j], bv[j], next[r]);
        scf::YieldOp::create(b, loc, next);
      });
  SmallVector<Output> outputs;
  for (int64_t r = 0; r < 16; ++r)
    outputs.push_back({add(rowBase, r), col, loop.getResult(r)});
  finish(outputs);
}

Value GemmBuilder::global(StringRef suffix, int64_t size, Type type) {
  auto module = func->getParentOfType<gpu::GPUModuleOp>();
  auto memrefType = MemRefType::get({size}, type);
  std::string name = (func.getName() + "_" + suffix).str();
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(func);
    Attribute zero = isa<FloatType>(type) ? Attribute(b.getFloatAttr(type, 0))
                                          : b.getIntegerAttr(type, 0);
    memref::GlobalOp::create(
        b, loc, name, b.getStringAttr("private"), memrefType,
        DenseElementsAttr::get(RankedTensorType::get({size}, type), zero),
        /*constant=*/false, /*alignment=*/nullptr);
  }
  return memref::GetGlobalOp::create(b, loc, memrefType, name);
}

Value GemmBuilder::storeSplit(ArrayRef<Output> outputs, Value partials,
                              Value counters, Value tile) {
  // Layout [split][batch][m][n]: only the elements of C.
  Value slab = mul(split, spec.batch * spec.m * spec.n);
  for (const Output &o : outputs) {
    Value inside = arith::AndIOp::create(b, loc, lessThan(o.row, spec.m),
                                         lessThan(o.col, spec.n));
    auto ifOp = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    memref::StoreOp::create(
        b, loc, o.value, partials,
        add(slab, add(cBase, add(mul(o.row, spec.n), o.col))));
  }
  // Every thread releases its stores before the block is counted; thread
  // 0 counts it and tells the block, through shared memory, whether it was
  // the tile's last.
  LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, kDeviceScope);
  gpu::BarrierOp::create(b, loc);
  auto sharedType = MemRefType::get(
      {1}, b.getI32Type(), AffineMap(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  Value flag = func.addWorkgroupAttribution(sharedType, loc);
  Value leader =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0));
  scf::IfOp::create(b, loc, leader, [&](OpBuilder &b, Location loc) {
    Value seen = memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi,
                                             i32(1), counters, tile);
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, kDeviceScope);
    Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, seen,
                                       i32(spec.splits - 1));
    memref::StoreOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, b.getI32Type(), last), flag,
        index(0));
    scf::YieldOp::create(b, loc);
  });
  gpu::BarrierOp::create(b, loc);
  Value last = memref::LoadOp::create(b, loc, flag, index(0));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, last, i32(0));
}

SmallVector<Value> GemmBuilder::sumSplits(ArrayRef<Output> outputs,
                                          Value partials) {
  // Clamped like the operands' rows: elements outside C are read, summed
  // and not stored.
  SmallVector<Value> offsets;
  for (const Output &o : outputs)
    offsets.push_back(add(cBase, add(mul(minIdx(o.row, spec.m - 1), spec.n),
                                     minIdx(o.col, spec.n - 1))));
  bool isInt = spec.c == GemmEncoding::S32;
  Value zero = isInt ? i32(0)
                     : arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                      APFloat(0.0f))
                           .getResult();
  int64_t slab = spec.batch * spec.m * spec.n;
  // `count` splits from `first`: all loads first (they are independent),
  // then the sums in split order.
  auto addSplits = [&](Value first, int64_t count, ValueRange totals) {
    SmallVector<Value> values;
    for (int64_t u = 0; u < count; ++u) {
      Value base = mul(add(first, u), slab);
      for (Value offset : offsets)
        values.push_back(
            memref::LoadOp::create(b, loc, partials, add(base, offset)));
    }
    SmallVector<Value> next(totals);
    for (int64_t u = 0; u < count; ++u)
      for (auto [i, total] : llvm::enumerate(next)) {
        Value value = values[u * offsets.size() + i];
        total = isInt ? arith::AddIOp::create(b, loc, total, value).getResult()
                      : arith::AddFOp::create(b, loc, total, value).getResult();
      }
    return next;
  };
  constexpr int64_t kUnroll = 4;
  int64_t unrolled = spec.splits / kUnroll * kUnroll;
  SmallVector<Value> totals(outputs.size(), zero);
  if (unrolled) {
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(unrolled), index(kUnroll), totals,
        [&](OpBuilder &, Location, Value first, ValueRange acc) {
          scf::YieldOp::create(b, loc, addSplits(first, kUnroll, acc));
        });
    totals.assign(loop.getResults().begin(), loop.getResults().end());
  }
  if (spec.splits % kUnroll)
    totals = addSplits(index(unrolled), spec.splits % kUnroll, totals);
  return totals;
}

void GemmBuilder::finish(ArrayRef<Output> outputs) {
  if (spec.splits == 1) {
    for (const Output &o : outputs)
      store(o.row, o.col, o.value);
    return;
  }
  bool isInt = spec.c == GemmEncoding::S32;
  Value partials =
      global("partials", spec.splits * spec.batch * spec.m * spec.n,
             isInt ? Type(b.getI32Type()) : Type(b.getF32Type()));
  int64_t tiles = spec.tilesX() * spec.tilesY() * spec.batch;
  Value counters = global("tiles", tiles, b.getI32Type());
  Value tile = add(mul(add(mul(batchIndex, spec.tilesY()),
                           gpu::BlockIdOp::create(b, loc, gpu::Dimension::y)),
                       spec.tilesX()),
                   gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  Value last = storeSplit(outputs, partials, counters, tile);
  scf::IfOp::create(b, loc, last, [&](OpBuilder &, Location) {
    // Acquire the other blocks' values; the tile's counter starts at zero
    // again for the next launch.
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, kDeviceScope);
    for (auto [o, total] :
         llvm::zip_equal(outputs, sumSplits(outputs, partials)))
      store(o.row, o.col, total);
    Value leader =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0));
    scf::IfOp::create(b, loc, leader, [&](OpBuilder &, Location) {
      memref::StoreOp::create(b, loc, i32(0), counters, tile);
      scf::YieldOp::create(b, loc);
    });
    scf::YieldOp::create(b, loc);
  });
}

void GemmBuilder::build() {
  if (spec.kind == "f32")
    buildSimt();
  else
    buildTensorCore();
}

gpu::GPUFuncOp mlir::qtrain::buildGemmKernel(OpBuilder &builder, Location loc,
                                             gpu::GPUModuleOp module,
                                             const GemmKernelSpec &spec) {
  std::string name = spec.name();
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing;
  MLIRContext *ctx = builder.getContext();
  auto memrefOf = [&](int64_t rows, int64_t cols, GemmEncoding encoding) {
    return MemRefType::get({spec.batch * rows * cols},
                           getGemmStorageType(ctx, encoding));
  };
  auto type = builder.getFunctionType({memrefOf(spec.m, spec.k, spec.a),
                                       memrefOf(spec.n, spec.k, spec.b),
                                       memrefOf(spec.m, spec.n, spec.c)},
                                      {});
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(builder, loc, name, type);
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func->setAttr(kGemmAttrName, spec.toAttr(builder));
  auto block = spec.block();
  func.setKnownBlockSizeAttr(builder.getDenseI32ArrayAttr(
      {int32_t(block[0]), int32_t(block[1]), int32_t(block[2])}));
  builder.setInsertionPointToStart(&func.getBody().front());
  GemmBuilder(builder, loc, spec, func).build();
  gpu::ReturnOp::create(builder, loc);
  return func;
}
