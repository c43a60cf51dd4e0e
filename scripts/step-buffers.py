#!/usr/bin/env python3
"""Which buffers a training step holds at its peak.

    qtrain-compile MODEL.mlir -o B.qtb [options] --dump-buffers=step.mlir
    scripts/step-buffers.py step.mlir [--curve]

Walks @train_step of the dump (the step as buffers, after bufferization and
qtrain-free-early) in program order, adding each memref.alloc and
subtracting each memref.dealloc, and prints the peak and the buffers live
there, largest first, with the line that allocates them: what to read to
see which tensor each one is. --curve also prints every allocation and
release of more than 0.5 MB with the running total. Allocations inside
loops count once, as the step's allocator sees them in a loop of one
iteration at a time. On convnet the peak is within 1 KB of what qtrain-run
measures with the step's allocator.
"""
import re
import sys

ELEMENT_BYTES = {"f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4,
                 "i64": 8, "f16": 2, "bf16": 2}
ALLOC = re.compile(r"(%\w+) = memref\.alloca?\(\).* : memref<([\dx]+)x(\w+)>")
DEALLOC = re.compile(r"memref\.dealloc (%\w+)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lines = open(sys.argv[1]).read().split("\n")
    starts = [i for i, l in enumerate(lines) if "func.func @train_step" in l]
    if not starts:
        sys.exit(f"step-buffers.py: no @train_step in {sys.argv[1]}")
    live, current, peak, at_peak, where = {}, 0, 0, {}, 0
    for i in range(starts[0], len(lines)):
        line = lines[i]
        if i > starts[0] and line.startswith("  func.func"):
            break
        m = ALLOC.search(line)
        if m:
            count = 1
            for d in m.group(2).split("x"):
                count *= int(d)
            size = count * ELEMENT_BYTES.get(m.group(3), 4)
            live[m.group(1)] = (size, i + 1, f"{m.group(2)}x{m.group(3)}")
            current += size
            if current > peak:
                peak, at_peak, where = current, dict(live), i + 1
            if "--curve" in sys.argv and size > 500000:
                print(f"{i + 1:6} + {m.group(1):14} {m.group(2)}x{m.group(3):8} "
                      f"{current / 2**20:8.2f} MiB")
        m = DEALLOC.search(line)
        if m and m.group(1) in live:
            size = live.pop(m.group(1))[0]
            current -= size
            if "--curve" in sys.argv and size > 500000:
                print(f"{i + 1:6} - {m.group(1):14} {'':20}"
                      f"{current / 2**20:8.2f} MiB")
    print(f"peak {peak / 2**20:.2f} MiB ({peak} bytes) at line {where}")
    for name, (size, line, shape) in sorted(at_peak.items(),
                                             key=lambda kv: -kv[1][0]):
        if size >= 50000:
            print(f"  {size / 2**20:8.2f} MiB  {shape:24} {name} (line {line})")


if __name__ == "__main__":
    main()
