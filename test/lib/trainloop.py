#!/usr/bin/env python3
"""Runs a compiled training step for a few steps on one fixed random batch.

usage: trainloop.py STEP.so STEP.mlir [--steps N] [--bits B] [--grad-bits G]
                    [--lr LR] [--seed S]

STEP.mlir is the output of qtrain-autodiff (with or without
qtrain-insert-quant); its @train_step signature gives the layout. Arguments
marked {qtrain.control = "bits" | "grad_bits" | "seed" | "step"} receive
--bits, --grad-bits, the seed and the step number. Prints one line per step,
"step K loss L", with L printed exactly (repr of the float), so two runs can
be compared bit for bit. Plain Python and ctypes.
"""

import argparse
import ctypes
import math
import os
import random
import re
import sys

ELEMENTS = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i64": ctypes.c_int64}
SCALARS = {"f32": ctypes.c_float, "f64": ctypes.c_double,
           "i32": ctypes.c_int32, "i64": ctypes.c_int64}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("step")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--bits", type=int, default=0)
    ap.add_argument("--grad-bits", type=int, default=0)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=3)
    opts = ap.parse_args()
    rng = random.Random(opts.seed)

    text = open(opts.step).read()
    sig = re.search(r"func\.func @train_step\((.*?)\)\s*->", text, re.S).group(1)
    args = re.findall(r"%arg\d+: ([^,{)]+(?:<[^>]*>)?)\s*(\{[^}]*\})?", sig)
    logits = re.search(r"func\.func @eval_step\(.*?\)\s*->\s*tensor<(\d+)x(\d+)x",
                       text, re.S)
    classes = int(logits.group(2))
    params = sum(1 for _, attrs in args if "qtrain.param" in attrs)

    buffers, call = [], []
    for i, (t, attrs) in enumerate(args):
        t = t.strip()
        m = re.fullmatch(r"tensor<((?:\d+x)*)(f32|f64|i64)>", t)
        if m:
            dims = [int(d) for d in m.group(1).split("x") if d]
            n = 1
            for d in dims:
                n *= d
            arr = (ELEMENTS[m.group(2)] * n)()
            if i < params:
                bound = 1.0 / math.sqrt(n // dims[0] if len(dims) > 1 else 1)
                for k in range(n):
                    arr[k] = rng.uniform(-bound, bound)
            elif i >= 2 * params and m.group(2) == "i64":
                for k in range(n):
                    arr[k] = rng.randrange(classes)
            elif i >= 2 * params:
                for k in range(n):
                    arr[k] = rng.uniform(-1.0, 1.0)
            buffers.append(arr)
            call.append(("ptr", arr))
            continue
        control = re.search(r'qtrain\.control = "(\w+)"', attrs or "")
        call.append(("scalar", t, control.group(1) if control else None))

    scalar_names = [c for c in call if c[0] == "scalar" and c[2] is None]
    hyper = dict(zip(range(len(scalar_names)), [opts.lr, 0.9, 5e-4]))
    outs = [(type(buffers[k]))() for k in range(2 * params)]
    lib = ctypes.CDLL(os.path.abspath(opts.lib))
    fn = lib.train_step
    loss_type = [c[1] for c in call if c[0] == "scalar" and c[2] is None][-1]
    fn.restype = SCALARS[loss_type]

    for step in range(opts.steps):
        values, hyper_index = [], 0
        for c in call:
            if c[0] == "ptr":
                values.append(ctypes.c_void_p(ctypes.addressof(c[1])))
                continue
            kind, name = c[1], c[2]
            if name == "bits":
                v = opts.bits
            elif name == "grad_bits":
                v = opts.grad_bits
            elif name == "seed":
                v = 1234
            elif name == "step":
                v = step
            else:
                v = hyper[hyper_index]
                hyper_index += 1
            values.append(SCALARS[kind](v))
        values += [ctypes.c_void_p(ctypes.addressof(o)) for o in outs]
        loss = fn(*values)
        print(f"step {step} loss {loss!r}")
        if not math.isfinite(loss):
            return 1
        # New parameters and momentum buffers become the next step's inputs.
        for k in range(2 * params):
            ctypes.memmove(buffers[k], outs[k], ctypes.sizeof(outs[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
