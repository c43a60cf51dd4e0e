"""Runs the functions of test/Conversion/QTrainToLinalg/promoted-rounding.mlir
from their shared object and checks them against the formats' definitions:
round(x, flag) is FP(4,3,4) saturating or FP(6,9,0) saturating, and the
count_* functions count |x| >= the overflow threshold (inf yes, NaN no)."""
import ctypes
import math
import random
import struct
import sys

lib = ctypes.CDLL(sys.argv[1])
F16 = ctypes.c_float * 16
F4096 = ctypes.c_float * 4096
for name in ("count_py", "count_gy", "count_long"):
    getattr(lib, name).restype = ctypes.c_int64
lib.round.restype = None

failures = []

def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got}, want {want}")

# The largest f32 below 31 (0x41F7FFFF): rounds to 30, does not count.
below31 = struct.unpack('<f', struct.pack('<I', 0x41F7FFFF))[0]
values = [0.0, 1.0, 30.0, below31, 31.0, -31.0, 31.5, 1e9, math.inf,
          -math.inf, math.nan, -5.0, 122879.0, 122880.0, -122880.0, 2e5]
x = F16(*values)
want_py = sum(1 for v in values if not math.isnan(v) and abs(v) >= 31.0)
want_gy = sum(1 for v in values if not math.isnan(v) and abs(v) >= 122880.0)
check("count_py", lib.count_py(x), want_py)
check("count_gy", lib.count_gy(x), want_gy)

rng = random.Random(7)
long_values = [rng.choice([1.0, 30.9, 31.0, 100.0, -40.0, math.nan, 0.5])
               for _ in range(4096)]
check("count_long", lib.count_long(F4096(*long_values)),
      sum(1 for v in long_values if not math.isnan(v) and abs(v) >= 31.0))

# The flag picks the format: 3.3 is 3.25 in FP(4,3,4) and 3.30078125 in
# FP(6,9,0); 100 saturates to 30 in the low format and stays in the high one.
out = F16()
inputs = F16(*([3.3, 100.0] + [0.0] * 14))
lib.round(inputs, ctypes.c_bool(False), out)
check("round low", (out[0], out[1]), (3.25, 30.0))
lib.round(inputs, ctypes.c_bool(True), out)
check("round high", (out[0], out[1]), (3.30078125, 100.0))

for f in failures:
    print("promotion-check: FAIL " + f)
print("promotion-check: " + ("FAIL" if failures else "PASS"))
sys.exit(1 if failures else 0)
