#!/usr/bin/env python3
"""Checks a compiled training step's gradients against central differences.

usage: gradcheck.py STEP.so STEP.mlir [--samples N] [--eps E] [--tol T] [--seed S]
                    [--index-bound K]

STEP.mlir is the output of qtrain-autodiff (its @train_step signature tells
the argument layout); STEP.so is the same module lowered with bare-pointer
memrefs and results as out-parameters. With lr = 1, momentum = 0 and
weight decay = 0 the step returns p - grad, so grad = p - p'. For N random
coordinates of every parameter the script compares grad with
(loss(p + e) - loss(p - e)) / 2e and fails (exit 1) if a relative error
exceeds T. Integer (i64) inputs, such as token ids, are drawn from [0, K).
Plain Python and ctypes: no numpy needed.
"""

import argparse
import ctypes
import math
import os
import random
import re
import sys

TENSOR = re.compile(r"tensor<((?:\d+x)*)(f32|f64|i64)>")
SCALARS = {"f32": ctypes.c_float, "f64": ctypes.c_double}
ELEMENTS = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i64": ctypes.c_int64}


def parse_signature(text):
    match = re.search(r"func\.func @train_step\((.*?)\)\s*->\s*\((.*?)\)\s*(?:attributes|\{)",
                      text, re.S)
    if not match:
        sys.exit("gradcheck: no @train_step in the step file")
    args, results = match.group(1), match.group(2)
    params = args.count("qtrain.param")
    arg_types = re.findall(r"%arg\d+: ([^,{)]+(?:<[^>]*>)?)", args)
    arg_types = [t.strip() for t in arg_types]
    return params, arg_types, results


def tensor_spec(t):
    m = TENSOR.fullmatch(t)
    if not m:
        return None
    dims = [int(d) for d in m.group(1).split("x") if d]
    return dims, m.group(2)


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("step")
    ap.add_argument("--samples", type=int, default=12)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--index-bound", type=int, default=2)
    opts = ap.parse_args()
    rng = random.Random(opts.seed)

    text = open(opts.step).read()
    params, arg_types, results = parse_signature(text)
    specs = [tensor_spec(t) for t in arg_types]
    scalar_type = arg_types[-1]
    if scalar_type not in SCALARS:
        sys.exit(f"gradcheck: unexpected hyperparameter type {scalar_type}")
    num_inputs = len(arg_types) - 2 * params - 4
    label_spec = specs[2 * params + num_inputs]

    def make(spec, fill):
        dims, elem = spec
        arr = (ELEMENTS[elem] * numel(dims))()
        for i in range(len(arr)):
            arr[i] = fill()
        return arr

    # Fan-in scaled weights keep activations O(1) in deep models.
    values = []
    for k in range(params):
        dims = specs[k][0]
        fan_in = numel(dims[1:]) if len(dims) > 1 else 1
        bound = 1.0 / math.sqrt(fan_in)
        values.append(make(specs[k], lambda: rng.uniform(-bound, bound)))
    buffers = [make(specs[params + k], lambda: 0.0) for k in range(params)]
    def input_fill(spec):
        if spec[1] == "i64":
            return lambda: rng.randrange(opts.index_bound)
        return lambda: rng.uniform(-1.0, 1.0)

    inputs = [make(specs[2 * params + i], input_fill(specs[2 * params + i]))
              for i in range(num_inputs)]
    if label_spec[1] == "i64":
        logits = re.search(r"func\.func @eval_step\(.*?\)\s*->\s*tensor<(\d+)x(\d+)x",
                           text, re.S)
        num_classes = int(logits.group(2))
        labels = make(label_spec, lambda: rng.randrange(num_classes))
    else:
        labels = make(label_spec, lambda: rng.uniform(-1.0, 1.0))
    outs = [make(specs[k % params], lambda: 0.0) for k in range(2 * params)]
    # State the step updates (batch norms' running statistics) comes back
    # through out-parameters after the parameters' and momentum's.
    result_specs = [tensor_spec(m.group(0)) for m in TENSOR.finditer(results)]
    outs += [make(spec, lambda: 0.0) for spec in result_specs[2 * params:]]

    lib = ctypes.CDLL(os.path.abspath(opts.lib))
    fn = lib.train_step
    scalar = SCALARS[scalar_type]
    fn.restype = scalar
    fn.argtypes = ([ctypes.c_void_p] * (2 * params + num_inputs + 1) +
                   [scalar] * 3 + [ctypes.c_void_p] * len(outs))
    ptr = ctypes.addressof

    def step():
        args = ([ptr(v) for v in values] + [ptr(b) for b in buffers] +
                [ptr(x) for x in inputs] + [ptr(labels), 1.0, 0.0, 0.0] +
                [ptr(o) for o in outs])
        return fn(*args)

    loss = step()
    print(f"gradcheck: loss {loss:.6g}")
    if not math.isfinite(loss):
        print("gradcheck: FAIL (the loss is not finite)")
        return 1
    grads = [[values[k][i] - outs[k][i] for i in range(len(values[k]))]
             for k in range(params)]
    worst = 0.0
    failed = False
    for k in range(params):
        n = len(values[k])
        picks = rng.sample(range(n), min(opts.samples, n))
        param_worst = 0.0
        for i in picks:
            saved = values[k][i]
            values[k][i] = saved + opts.eps
            up = step()
            values[k][i] = saved - opts.eps
            down = step()
            values[k][i] = saved
            fd = (up - down) / (2 * opts.eps)
            g = grads[k][i]
            if not (math.isfinite(fd) and math.isfinite(g)):
                err = math.inf
            elif abs(fd - g) < 1e-12:
                err = 0.0
            else:
                err = abs(fd - g) / max(abs(fd), abs(g))
            param_worst = max(param_worst, err)
            if err > opts.tol:
                failed = True
                print(f"gradcheck: param #{k} element {i}: autodiff {g:.9g}, "
                      f"finite difference {fd:.9g}, relative error {err:.3g}")
        print(f"gradcheck: param #{k} ({len(picks)} of {n} elements): "
              f"max relative error {param_worst:.3g}")
        worst = max(worst, param_worst)
    print(f"gradcheck: {'FAIL' if failed else 'PASS'} "
          f"(max relative error {worst:.3g}, tolerance {opts.tol:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
