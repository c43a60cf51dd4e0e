#!/usr/bin/env python3
"""Runs a compiled training step for a few steps on one fixed random batch.

usage: trainloop.py STEP.so STEP.mlir [--steps N] [--bits B] [--grad-bits G]
                    [--lr LR] [--seed S] [--schedule-csv FILE]
                    [--data DIR] [--print-state]

STEP.mlir is the output of qtrain-autodiff (with or without
qtrain-insert-quant); its @train_step signature gives the layout. Arguments
marked {qtrain.control = "bits" | "grad_bits" | "seed" | "step"} receive
--bits, --grad-bits, the seed and the step number. Prints one line per step,
"step K loss L", with L printed exactly (repr of the float), so two runs can
be compared bit for bit. Plain Python and ctypes.

--schedule-csv takes the CSV of qtrain-schedule (step,bits_fw,bits_bw,...)
and uses its precisions step by step. --data reads Fashion-MNIST (or any
MNIST-format IDX files, gzip or plain) from DIR and feeds consecutive
training batches, normalized with mean 0.2860 and std 0.3530, instead of a
fixed random batch; it then also prints the mean loss of every 50 steps.
This is a test and demo driver until the runtime (qtrain-run) exists.
"""

import argparse
import ctypes
import gzip
import struct
import math
import os
import random
import re
import sys

ELEMENTS = {"f32": ctypes.c_float, "f64": ctypes.c_double,
            "i32": ctypes.c_int32, "i64": ctypes.c_int64}
SCALARS = {"f32": ctypes.c_float, "f64": ctypes.c_double,
           "i32": ctypes.c_int32, "i64": ctypes.c_int64}


def read_idx(root, name):
    for ext in (".gz", ""):
        path = os.path.join(root, name + ext)
        if os.path.exists(path):
            opener = gzip.open if ext else open
            with opener(path, "rb") as f:
                data = f.read()
            magic, count = struct.unpack(">II", data[:8])
            offset = 16 if magic == 2051 else 8
            return count, data[offset:]
    sys.exit(f"trainloop: {name}[.gz] not found in {root}; install the Debian "
             "package dataset-fashion-mnist")


def evaluate(lib, text, params, x_buf, states, opts, scale):
    """Test-set accuracy of @eval_step with the trained parameters."""
    sig = re.search(r"func\.func @eval_step\((.*?)\)\s*->\s*tensor<(\d+)x(\d+)x",
                    text, re.S)
    args = re.findall(r"%arg\d+: ([^,{)]+(?:<[^>]*>)?)\s*(\{[^}]*\})?", sig.group(1))
    batch, classes = int(sig.group(2)), int(sig.group(3))
    count, images = read_idx(opts.data, "t10k-images-idx3-ubyte")
    _, labels = read_idx(opts.data, "t10k-labels-idx1-ubyte")
    per_image = len(x_buf) // batch
    logits = (ctypes.c_float * (batch * classes))()
    fn = lib.eval_step
    fn.restype = None
    call, state_iter, param_iter = [], iter(states), iter(params)
    for t, attrs in args:
        attrs = attrs or ""
        control = re.search(r'qtrain\.control = "(\w+)"', attrs)
        if "qtrain.param" in attrs:
            call.append(ctypes.c_void_p(ctypes.addressof(next(param_iter))))
        elif "qtrain.state" in attrs:
            call.append(ctypes.c_void_p(ctypes.addressof(next(state_iter))))
        elif control:
            name = control.group(1)
            value = {"bits": opts.eval_bits, "grad_bits": opts.grad_bits,
                     "seed": 1234, "step": 0}[name]
            call.append((ctypes.c_int64 if name == "seed" else ctypes.c_int32)(value))
        else:
            call.append(ctypes.c_void_p(ctypes.addressof(x_buf)))
    call.append(ctypes.c_void_p(ctypes.addressof(logits)))
    correct = seen = 0
    for first in range(0, count - batch + 1, batch):
        pixels = images[first * per_image:(first + batch) * per_image]
        for k, v in enumerate(pixels):
            x_buf[k] = scale[v]
        fn(*call)
        for k in range(batch):
            row = logits[k * classes:(k + 1) * classes]
            correct += row.index(max(row)) == labels[first + k]
        seen += batch
    print(f"test accuracy: {100.0 * correct / seen:.2f}% ({correct}/{seen} "
          f"test images, evaluated at {opts.eval_bits or 32} bits)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("step")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--bits", type=int, default=0)
    ap.add_argument("--grad-bits", type=int, default=0)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--slot", type=int, default=0,
                    help="variant index written to every site's slot "
                         "(steps built by qtrain-materialize-variants)")
    ap.add_argument("--schedule-csv")
    ap.add_argument("--data")
    ap.add_argument("--eval-bits", type=int,
                    help="with --data: after training, evaluate @eval_step on "
                         "the test set at this forward precision")
    ap.add_argument("--print-state", action="store_true",
                    help="print the state (running ranges) after the last step")
    opts = ap.parse_args()
    rng = random.Random(opts.seed)

    text = open(opts.step).read()
    sig_match = re.search(r"func\.func @train_step\((.*?)\)\s*->\s*\((.*?)\)\s*(?:attributes|\{)",
                          text, re.S)
    sig, results = sig_match.group(1), sig_match.group(2)
    args = re.findall(r"%arg\d+: ([^,{)]+(?:<[^>]*>)?)\s*(\{[^}]*\})?", sig)
    logits = re.search(r"func\.func @eval_step\(.*?\)\s*->\s*tensor<(\d+)x(\d+)x",
                       text, re.S)
    classes = int(logits.group(2))
    params = sum(1 for _, attrs in args if "qtrain.param" in attrs)

    buffers, call, states = [], [], []
    for i, (t, attrs) in enumerate(args):
        t = t.strip()
        m = re.fullmatch(r"tensor<((?:\d+x)*)(f32|f64|i32|i64)>", t)
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
            elif "qtrain.state" in (attrs or ""):
                pass  # running statistics start at zero
            elif 'qtrain.control = "slots"' in (attrs or ""):
                for k in range(n):
                    arr[k] = opts.slot
            elif i >= 2 * params and m.group(2) == "i64":
                for k in range(n):
                    arr[k] = rng.randrange(classes)
            elif i >= 2 * params:
                for k in range(n):
                    arr[k] = rng.uniform(-1.0, 1.0)
            buffers.append(arr)
            call.append(("ptr", arr))
            if "qtrain.state" in (attrs or ""):
                states.append(arr)
            continue
        control = re.search(r'qtrain\.control = "(\w+)"', attrs or "")
        call.append(("scalar", t, control.group(1) if control else None))

    scalar_names = [c for c in call if c[0] == "scalar" and c[2] is None]
    hyper = dict(zip(range(len(scalar_names)), [opts.lr, 0.9, 5e-4]))
    # Results: new params, new momentum buffers, new state, loss.
    outs = [(type(buffers[k]))() for k in range(2 * params)]
    outs += [(type(st))() for st in states]
    feedback = buffers[:2 * params] + states
    lib = ctypes.CDLL(os.path.abspath(opts.lib))
    fn = lib.train_step
    loss_type = [c[1] for c in call if c[0] == "scalar" and c[2] is None][-1]
    fn.restype = SCALARS[loss_type]

    schedule = {}
    if opts.schedule_csv:
        for line in open(opts.schedule_csv):
            fields = line.strip().split(",")
            if fields[0].isdigit():
                schedule[int(fields[0])] = (int(fields[1]), int(fields[2]))
    data_x = data_labels = None
    if opts.data:
        x_buf = buffers[2 * params]
        label_buf = next(b for b in buffers if b._type_ is ctypes.c_int64)
        _, images = read_idx(opts.data, "train-images-idx3-ubyte")
        count, labels_raw = read_idx(opts.data, "train-labels-idx1-ubyte")
        batch = len(label_buf)
        per_image = len(x_buf) // batch
        scale = [((v / 255.0) - 0.2860) / 0.3530 for v in range(256)]
    window = []

    for step in range(opts.steps):
        if opts.data:
            first = (step * batch) % (count - batch + 1)
            pixels = images[first * per_image:(first + batch) * per_image]
            for k, v in enumerate(pixels):
                x_buf[k] = scale[v]
            for k in range(batch):
                label_buf[k] = labels_raw[first + k]
        bits, grad_bits = schedule.get(step, (opts.bits, opts.grad_bits))
        values, hyper_index = [], 0
        for c in call:
            if c[0] == "ptr":
                values.append(ctypes.c_void_p(ctypes.addressof(c[1])))
                continue
            kind, name = c[1], c[2]
            if name == "bits":
                v = bits
            elif name == "grad_bits":
                v = grad_bits
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
        if not opts.data:
            print(f"step {step} loss {loss!r}")
        else:
            window.append(loss)
            if len(window) == 50 or step == opts.steps - 1:
                print(f"steps {step + 1 - len(window)}-{step} (bits {bits}/"
                      f"{grad_bits}): mean loss {sum(window) / len(window):.4f}")
                window = []
        if not math.isfinite(loss):
            return 1
        # New parameters, momentum buffers and state are the next step's
        # inputs.
        for dst, src in zip(feedback, outs):
            ctypes.memmove(dst, src, ctypes.sizeof(src))
    if opts.data and opts.eval_bits is not None:
        evaluate(lib, text, buffers[:params], x_buf, states, opts, scale)
    if opts.print_state:
        for i, st in enumerate(states):
            print(f"state {i} " + " ".join(repr(float(v)) for v in st))
    return 0


if __name__ == "__main__":
    sys.exit(main())
