#!/usr/bin/env python3
"""Checks that a rebatched forward computes each sample as the export does.

usage: rebatch_check.py EXPORTED.so REBATCHED.so REBATCHED.mlir
                        [--index-bound K] [--seed S] [--tol T]

EXPORTED.so and REBATCHED.so are @forward before and after qtrain-rebatch,
lowered with bare-pointer memrefs and the result as the last out-parameter.
REBATCHED.mlir tells the argument layout: {qtrain.param} arguments first,
shared by both, then inputs whose dimension 0 is the new batch N. The script
draws random parameters and N different samples (i64 inputs from [0, K)),
runs the rebatched forward once on all N and the exported one on each
sample alone, and fails (exit 1) if a logit differs by more than T or if
two samples give the same logits (a rebatch that broadcast one sample to
all would). Plain Python and ctypes: no numpy needed.
"""

import argparse
import ctypes
import os
import random
import re
import sys

TENSOR = re.compile(r"tensor<((?:\d+x)*)(f32|f64|i64)>")
ELEMENTS = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i64": ctypes.c_int64}


def parse_forward(text):
    match = re.search(r"func\.func @forward\((.*?)\)\s*->\s*(tensor<[^>]*>)",
                      text, re.S)
    if not match:
        sys.exit("rebatch_check: no @forward returning a tensor")
    args = re.findall(r"%[\w]+: (tensor<[^>]*>)( \{[^}]*\})?", match.group(1))
    return [(spec(t), "qtrain.param" in (attrs or "")) for t, attrs in args], \
        spec(match.group(2))


def spec(t):
    m = TENSOR.fullmatch(t)
    if not m:
        sys.exit(f"rebatch_check: unexpected type {t}")
    return [int(d) for d in m.group(1).split("x") if d], m.group(2)


def numel(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def load(path, num_args):
    lib = ctypes.CDLL(os.path.abspath(path))
    lib.forward.argtypes = [ctypes.c_void_p] * (num_args + 1)
    lib.forward.restype = None
    return lib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exported")
    ap.add_argument("rebatched")
    ap.add_argument("mlir")
    ap.add_argument("--index-bound", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tol", type=float, default=1e-9)
    opts = ap.parse_args()
    rng = random.Random(opts.seed)

    args, (out_dims, out_elem) = parse_forward(open(opts.mlir).read())
    batch = out_dims[0]
    buffers = []
    for (dims, elem), _ in args:
        n = numel(dims)
        if elem == "i64":
            values = [rng.randrange(opts.index_bound) for _ in range(n)]
        else:
            values = [rng.uniform(-1.0, 1.0) for _ in range(n)]
        buffers.append((ELEMENTS[elem] * n)(*values))
    out = (ELEMENTS[out_elem] * numel(out_dims))()
    ptr = ctypes.addressof
    load(opts.rebatched, len(args)).forward(*[ptr(b) for b in buffers], ptr(out))

    exported = load(opts.exported, len(args))
    row = numel(out_dims) // batch
    worst, rows = 0.0, []
    for b in range(batch):
        sample = []
        for ((dims, elem), is_param), buf in zip(args, buffers):
            if is_param:
                sample.append(buf)
                continue
            n = numel(dims) // batch
            size = ctypes.sizeof(ELEMENTS[elem])
            sample.append((ELEMENTS[elem] * n).from_buffer_copy(buf, b * n * size))
        ref = (ELEMENTS[out_elem] * row)()
        exported.forward(*[ptr(s) for s in sample], ptr(ref))
        got = out[b * row:(b + 1) * row]
        rows.append(list(ref))
        worst = max([worst] + [abs(r - g) for r, g in zip(ref, got)])
        print(f"rebatch_check: sample {b}: " + " ".join(f"{v:.5f}" for v in got))
    distinct = len({tuple(r) for r in rows}) == batch
    ok = worst <= opts.tol and distinct
    print(f"rebatch_check: {'PASS' if ok else 'FAIL'} ({batch} samples, max "
          f"difference {worst:.3g}, samples "
          f"{'differ' if distinct else 'repeat'})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
