//===- Passes.td - qtrain kernel formation -----------------*- tablegen -*-===//
//
// Kernel formation: the quantized layers become kernel sites, each
// specialized per bitwidth into variant functions that the runtime selects
// (scf.index_switch on a slot), with integer kernels where the operands are
// integer codes.
//
//===----------------------------------------------------------------------===//

#ifndef QTRAIN_KERNELS_PASSES_TD
#define QTRAIN_KERNELS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FormKernelsPass : Pass<"qtrain-form-kernels", "ModuleOp"> {
  let summary = "Wrap every product of a kernel site in a qtrain.kernel";
  let description = [{
    Each product of a kernel site (the op `qtrain-insert-quant` tags with
    `qtrain.layer`, and the two gradient products `qtrain-autodiff` tags
    with the same site and `qtrain.product = "input_grad" | "weight_grad"`)
    becomes a `qtrain.kernel` holding the product and, for each operand, the
    quantizer it reads through transposes, zero padding and other data
    movement (the flipped kernel of a convolution's input gradient). A
    quantizer shared by two products (a weight's, read by the forward
    product and the input gradient) is cloned into both; the original goes
    once unused. The kernel owns its operands' precisions: nothing outside
    it reads its quantizers.

    With `input-grad-roundings`, an input gradient's kernel also pulls in
    the float rounding of its error (`qtrain.round_float`, the scaled e5m2
    errors of `--grad-format=e5m2`), so that it rounds the raw error
    itself: `qtrain-integer-kernels input-grad=fp8` folds the weight's
    scales into the error before that rounding. Otherwise a rounding stays
    outside the kernels, shared by the two gradient products.

    A module without tagged products or kernels is an error, as is a tagged
    op that is not a linalg op with one result. Running the pass again
    changes nothing.
  }];
  let options = [
    Option<"inputGradRoundings", "input-grad-roundings", "bool",
           /*default=*/"false",
           "Pull an error's float rounding into its input-gradient kernels">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "qtrain.kernel ops formed">,
  ];
}

def MaterializeVariantsPass : Pass<"qtrain-materialize-variants",
                                   "::mlir::ModuleOp"> {
  let summary = "One specialized kernel per site and precision, selected by slot";
  let description = [{
    Runs on the output of `qtrain-autodiff`. Every quantized layer is a
    kernel site (`qtrain.layer = k`) with three products: the forward op
    (`qtrain.product = "forward"`) and the two backward products
    (`"input_grad"`, `"weight_grad"`). Each product is outlined, together
    with the quantizers (and transposes and paddings of quantized values)
    that feed it, into functions, one per precision the site can run at,
    with the bitwidths as constants:

    ```
    @train_step_site1_forward_b4(...)          forward at 4 bits
    @train_step_site1_input_grad_b4_g8(...)    input gradient at 4/8 bits
    @eval_step_site1_forward_b4(...)           forward with running ranges
    ```

    The site's variant list is (0, 0) when `fp32` is set, then every
    (bits, grad_bits) of `bits` x `grad-bits`. The step gains the argument
    `%slots: tensor<N x i32> {qtrain.control = "slots"}` (one entry per
    site, before the labels of `@train_step`, last in `@eval_step`), and
    each product becomes an `scf.index_switch` on its site's slot that calls
    the variant; the runtime writes the variant index to the slot before
    each step. The variant functions carry `qtrain.variant =
    #qtrain.variant<site = S, product = P, bits = B, grad_bits = G>`; the
    module gets `qtrain.sites` (the variant list of every site, with the
    site's op and MACs) for the bundle manifest.

    A request for more variant functions than `max-variants` is refused with
    the numbers. One remark per site gives its op, MACs and variant count.
  }];
  let options = [
    Option<"bits", "bits", "std::string", /*default=*/"\"3:8\"",
           "Forward precisions: a range MIN:MAX or a list B,B,...">,
    Option<"gradBits", "grad-bits", "std::string", /*default=*/"\"8\"",
           "Backward (error) precisions: a range MIN:MAX or a list">,
    Option<"fp32", "fp32", "bool", /*default=*/"true",
           "Also materialize the full-precision variant (0/0)">,
    Option<"maxVariants", "max-variants", "unsigned", /*default=*/"1000",
           "Refuse requests that would create more variant functions">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numVariants", "variants", "Variant functions created">,
  ];
}

def IntegerKernelsPass : Pass<"qtrain-integer-kernels", "ModuleOp"> {
  let summary = "Integer kernels for the products of quantized operands";
  let description = [{
    In every kernel variant (a function with `qtrain.variant`, made by
    `qtrain-materialize-variants`), a product whose two factors are
    quantized on integer grids of constant bitwidth (through zero padding
    and transposes) becomes an integer contraction of their codes
    (`qtrain.quantize`) plus zero-point corrections:

    ```
    a = (ca + ha) * sa + la   (ha = 2^(ba-1), the codes ca are centred)
    y = init + sa*sw*T1 + sa*lw'*T2 + la'*sw*T3 + la'*lw'*T4
    T1 = sum ca*cw   T2 = sum ca*mw   T3 = sum ma*cw   T4 = sum ma*mw
    ```

    with l' = l + h*s, m the 0/1 mask of an operand (0 in its zero padding,
    where its value is 0, not a grid point), every T an exact integer
    contraction over the same loops as the product, and the epilogue in
    f64 in exactly that order, rounded once to f32. A correction term runs
    the contraction with the loops private to the masked operand collapsed
    to one iteration, so it costs 1/F of the main term (F: that operand's
    private extent, e.g. the output channels). Codes are i8 up to 8 bits and
    i16 up to 16; each term accumulates in i32 when its reduction length
    times the largest product of codes cannot overflow it, else in i64.

    A product stays in f32 on the fake-quantized values, with one remark
    per site and product, when its factors are not both quantized or when a
    per-channel scale runs along a reduction dimension (the input gradient
    of a layer with per-output-channel weights): such a sum cannot be
    factored into one integer product. The variant's `qtrain.variant`
    gets `kernel = i8`, `i16` or `f32`.

    `input-grad` chooses what those input gradients (variants with bits > 0
    and grad_bits > 0) become: `f32` keeps them as they are; `bf16` rounds
    both operands to bf16, so the product has bf16 products and f32 sums
    (`kernel = bf16`); `int` folds the weight's per-channel scale s_W into
    the error before its per-tensor quantization, dX = sum Q(E s_W) * q_W +
    sum Q(E s_W) * mn_W / s_W (q_W the weight's grid indices), the first
    sum an integer product of codes like any other, the second (the
    weight's zero points) an f32 sum that runs dX's channels once; `fp8`
    makes the same fold for an error rounded to e5m2 with a per-tensor
    power of two (`--grad-format=e5m2`, the rounding pulled into the kernel
    by `qtrain-form-kernels input-grad-roundings`), dX = sum R(E s_W) *
    c_W + sum R(E s_W) * (mn_W / s_W + 2^(b-1)) with c_W the weight's
    centred codes: an f32 product of exact operands here, which
    `qtrain-fp8-error-products` runs on fp8 or bf16 tensor cores.

    With `reference-sums`, the terms are computed plainly: i64 accumulators
    and full-size masks, nothing collapsed; the optimized form must equal
    it bit for bit. With `f64-reference`, every product instead accumulates its
    fake-quantized operands in f64 and rounds once to f32
    (`kernel = f64`): what the reference quantizer plus an fp64 product
    predicts, which the integer kernels are checked against.
  }];
  let options = [
    Option<"f64Reference", "f64-reference", "bool", /*default=*/"false",
           "Accumulate every product in f64 instead (the reference)">,
    Option<"referenceSums", "reference-sums", "bool", /*default=*/"false",
           "The plain integer form: i64 accumulators, full-size masks, no "
           "collapsed correction loops (a reference for the optimized one)">,
    Option<"inputGrad", "input-grad", "std::string", /*default=*/"\"f32\"",
           "The input gradients of per-channel weights: f32 (the exact "
           "path), bf16 (bf16 products, f32 sums), int (the weight's "
           "scales folded into the error, an integer product) or fp8 (the "
           "same fold for e5m2 errors)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::qtrain::QTrainDialect"
  ];
  let statistics = [
    Statistic<"numInteger", "integer-products", "Products made integer">,
    Statistic<"numFloat", "float-products", "Products left in f32">,
  ];
}

def AddEmptySlotsPass : Pass<"qtrain-add-empty-slots", "::mlir::ModuleOp"> {
  let summary = "Give a training module without kernel sites the step ABI of one with sites";
  let description = [{
    A training module whose layers are not quantized by a precision
    schedule (`qtrain-compile --policy=none`, the float formats of
    `qtrain-assign-precision`) has no kernel sites and so no `slots`
    control. The runtime calls every step with the same arguments
    (docs/bundle.md, "The step ABI"), so this pass adds an empty
    `tensor<0xi32>` `slots` argument after the last control or state
    argument of `@train_step` and `@eval_step`, and an empty `qtrain.sites`
    to the module. The `qtrain-kernels` pipeline runs it instead of the
    kernel passes when the policy is `none`.

    Fails on a module that already has kernel sites, and on a step with no
    control arguments.
  }];
}

#endif // QTRAIN_KERNELS_PASSES_TD
