//===- QuantizedOperandTests.cpp - The quantizer behind an operand --------===//
//
// Part of the qtrain project.
//
// traceQuantizedOperand (lib/Analysis) with each pass's options: which
// data movement it looks through, where it stops, the chain in program
// order and how dimensions move along it.
//
//===----------------------------------------------------------------------===//

#include "qtrain/Analysis/QuantizedOperand.h"

#include "QTrain/QTrainDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::qtrain;

namespace {

using Pads = DataMovementOptions::Pads;

/// A weight quantized, transposed, zero-padded and flipped (a copy), with
/// each op named by a `test.name` attribute; a second pad pads with 1.0;
/// a kernel reads a quantizer from outside its region.
constexpr const char *kModule = R"mlir(
func.func @f(%w: tensor<4x16x2xf32> {qtrain.param}, %b: i32)
    -> (tensor<18x2x4xf32>, tensor<18x2x4xf32>, tensor<2x4x16xf32>,
        tensor<2x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %q = qtrain.fake_quant %w, %b role weight rounding nearest_even
      granularity<per_channel, axis = 0> {test.name = "quant"}
      : tensor<4x16x2xf32>
  %e = tensor.empty() : tensor<2x4x16xf32>
  %t = linalg.transpose ins(%q : tensor<4x16x2xf32>)
      outs(%e : tensor<2x4x16xf32>) permutation = [2, 0, 1]
      {test.name = "transpose"}
  %p = tensor.pad %t low[0, 0, 1] high[0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } {test.name = "pad"} : tensor<2x4x16xf32> to tensor<2x4x18xf32>
  %e2 = tensor.empty() : tensor<18x2x4xf32>
  %c = linalg.generic {
      indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, 17 - d0)>,
                       affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<2x4x18xf32>) outs(%e2 : tensor<18x2x4xf32>)
      attrs = {test.name = "copy"} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<18x2x4xf32>
  %p1 = tensor.pad %t low[0, 0, 1] high[0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %one : f32
  } {test.name = "pad-one"} : tensor<2x4x16xf32> to tensor<2x4x18xf32>
  %c1 = linalg.generic {
      indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, 17 - d0)>,
                       affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p1 : tensor<2x4x18xf32>) outs(%e2 : tensor<18x2x4xf32>)
      attrs = {test.name = "copy-of-pad-one"} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<18x2x4xf32>
  %k = qtrain.kernel site 0 "forward" attributes {test.name = "kernel"}
      -> tensor<2x4x16xf32> {
    %e3 = tensor.empty() : tensor<2x4x16xf32>
    %t2 = linalg.transpose ins(%q : tensor<4x16x2xf32>)
        outs(%e3 : tensor<2x4x16xf32>) permutation = [2, 0, 1]
        {test.name = "inner-transpose"}
    qtrain.yield %t2 : tensor<2x4x16xf32>
  }
  %e4 = tensor.empty() : tensor<2x4x16xf32>
  %tw = linalg.transpose ins(%w : tensor<4x16x2xf32>)
      outs(%e4 : tensor<2x4x16xf32>) permutation = [2, 0, 1]
      {test.name = "param-transpose"}
  return %c, %c1, %k, %tw
      : tensor<18x2x4xf32>, tensor<18x2x4xf32>, tensor<2x4x16xf32>,
        tensor<2x4x16xf32>
}
)mlir";

class QuantizedOperandTest : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect, tensor::TensorDialect,
                        QTrainDialect>();
    module = parseSourceString<ModuleOp>(kModule, &context);
    ASSERT_TRUE(module);
  }

  /// The op named `name`.
  Operation *op(StringRef name) {
    Operation *found = nullptr;
    module->walk([&](Operation *o) {
      if (auto n = o->getAttrOfType<StringAttr>("test.name");
          n && n.getValue() == name)
        found = o;
    });
    EXPECT_TRUE(found) << name.str();
    return found;
  }
  Value result(StringRef name) { return op(name)->getResult(0); }

  /// The names of `traced`'s chain, in order.
  static std::vector<std::string> names(const QuantizedOperand &traced) {
    std::vector<std::string> out;
    for (Operation *o : traced.chain)
      out.push_back(o->getAttrOfType<StringAttr>("test.name").str());
    return out;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(QuantizedOperandTest, CopiesAreLookedThroughOnlyWhenAsked) {
  DataMovementOptions options;
  QuantizedOperand plain = traceQuantizedOperand(result("copy"), options);
  EXPECT_FALSE(plain.quant);
  EXPECT_EQ(plain.source, result("copy"));
  EXPECT_TRUE(plain.chain.empty());

  options.copies = true;
  QuantizedOperand traced = traceQuantizedOperand(result("copy"), options);
  EXPECT_EQ(traced.quant, cast<FakeQuantOp>(op("quant")));
  EXPECT_EQ(traced.source, result("quant"));
  EXPECT_EQ(names(traced),
            (std::vector<std::string>{"transpose", "pad", "copy"}));
}

TEST_F(QuantizedOperandTest, PadsByKind) {
  DataMovementOptions options;
  options.copies = true;
  options.pads = Pads::None;
  QuantizedOperand none = traceQuantizedOperand(result("copy"), options);
  EXPECT_FALSE(none.quant);
  EXPECT_EQ(none.source, result("pad"));
  EXPECT_EQ(names(none), (std::vector<std::string>{"copy"}));

  options.pads = Pads::StaticZero;
  EXPECT_TRUE(traceQuantizedOperand(result("copy"), options).quant);
  QuantizedOperand one =
      traceQuantizedOperand(result("copy-of-pad-one"), options);
  EXPECT_FALSE(one.quant);
  EXPECT_EQ(one.source, result("pad-one"));

  options.pads = Pads::Any;
  EXPECT_TRUE(traceQuantizedOperand(result("copy-of-pad-one"), options).quant);
  EXPECT_TRUE(isStaticZeroPadding(cast<tensor::PadOp>(op("pad"))));
  EXPECT_FALSE(isStaticZeroPadding(cast<tensor::PadOp>(op("pad-one"))));
}

TEST_F(QuantizedOperandTest, DimensionsMoveThroughTransposesNotPads) {
  DataMovementOptions options;
  QuantizedOperand traced = traceQuantizedOperand(result("pad"), options);
  ASSERT_TRUE(traced.quant);
  ASSERT_EQ(names(traced), (std::vector<std::string>{"transpose", "pad"}));
  // permutation = [2, 0, 1]: the result's dimension i is the source's
  // perm[i].
  EXPECT_EQ(traced.tracedPosition(0), 1);
  EXPECT_EQ(traced.tracedPosition(1), 2);
  EXPECT_EQ(traced.tracedPosition(2), 0);
  for (int64_t d = 0; d < 3; ++d)
    EXPECT_EQ(traced.sourcePosition(traced.tracedPosition(d)), d);
}

TEST_F(QuantizedOperandTest, StopsAtTheBlock) {
  auto kernel = cast<KernelOp>(op("kernel"));
  DataMovementOptions options;
  options.block = &kernel.getBody().front();
  QuantizedOperand inside =
      traceQuantizedOperand(result("inner-transpose"), options);
  EXPECT_FALSE(inside.quant);
  EXPECT_EQ(inside.source, result("quant"));
  EXPECT_EQ(names(inside), (std::vector<std::string>{"inner-transpose"}));

  options.block = nullptr;
  EXPECT_TRUE(traceQuantizedOperand(result("inner-transpose"), options).quant);
}

TEST_F(QuantizedOperandTest, AParameterIsASourceWithoutQuantizer) {
  DataMovementOptions options;
  options.pads = Pads::None;
  QuantizedOperand traced =
      traceQuantizedOperand(result("param-transpose"), options);
  EXPECT_FALSE(traced.quant);
  auto arg = dyn_cast<BlockArgument>(traced.source);
  ASSERT_TRUE(arg);
  EXPECT_EQ(arg.getArgNumber(), 0u);
  EXPECT_EQ(
      &traced.chain.front()->getOpOperand(0),
      &cast<linalg::TransposeOp>(op("param-transpose")).getInputMutable());
}

} // namespace
