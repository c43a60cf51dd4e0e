#!/usr/bin/env python3
"""Writes a deep MLP forward graph for qtrain-autodiff to stdout.

deep_mlp.py LAYERS [--width W] [--batch N]: LAYERS linear layers of W -> W
features (nn.Linear as torch-mlir writes it: a transpose of the weight and a
matmul into the broadcast bias), ReLU between them, batch N. Every layer
between the first and the last is the same, so the work a pass does per
layer can be compared across depths (test/Codegen/CPU/
promote-accumulators-deep.test).
"""

import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("layers", type=int)
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    if args.layers < 1:
        parser.error("LAYERS must be at least 1")
    n, w = args.batch, args.width
    act = f"tensor<{n}x{w}xf32>"
    weight = f"tensor<{w}x{w}xf32>"
    bias = f"tensor<{w}xf32>"
    out = ["#bias = affine_map<(n, f) -> (f)>",
           "#id = affine_map<(n, f) -> (n, f)>", ""]
    params = []
    for i in range(args.layers):
        params.append(f"%w{i}: {weight} {{qtrain.param}}")
        params.append(f"%b{i}: {bias} {{qtrain.param}}")
    out.append("func.func @forward(" + ", ".join(params) +
               f", %x: {act}) -> {act} {{")
    out.append("  %zero = arith.constant 0.000000e+00 : f32")
    out.append(f"  %init = tensor.empty() : {act}")
    out.append(f"  %wt_init = tensor.empty() : {weight}")
    prev = "%x"
    for i in range(args.layers):
        out.append(f"  %wt{i} = linalg.transpose ins(%w{i} : {weight}) "
                   f"outs(%wt_init : {weight}) permutation = [1, 0]")
        out.append(f"  %hb{i} = linalg.generic {{indexing_maps = [#bias, #id], "
                   f"iterator_types = [\"parallel\", \"parallel\"]}} "
                   f"ins(%b{i} : {bias}) outs(%init : {act}) {{")
        out.append("  ^bb0(%v: f32, %o: f32):")
        out.append("    linalg.yield %v : f32")
        out.append(f"  }} -> {act}")
        out.append(f"  %h{i} = linalg.matmul ins({prev}, %wt{i} : {act}, "
                   f"{weight}) outs(%hb{i} : {act}) -> {act}")
        prev = f"%h{i}"
        if i + 1 < args.layers:
            out.append(f"  %a{i} = linalg.generic {{indexing_maps = [#id, #id], "
                       f"iterator_types = [\"parallel\", \"parallel\"]}} "
                       f"ins(%h{i} : {act}) outs(%init : {act}) {{")
            out.append("  ^bb0(%v: f32, %o: f32):")
            out.append("    %m = arith.maximumf %v, %zero : f32")
            out.append("    linalg.yield %m : f32")
            out.append(f"  }} -> {act}")
            prev = f"%a{i}"
    out.append(f"  return {prev} : {act}")
    out.append("}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
