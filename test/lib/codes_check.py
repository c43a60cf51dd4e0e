"""Checks the codes function of test/Conversion/QTrainToLinalg/
float-codes.mlir: decode(encode(r)) == r bit for bit for every rounded
value r (NaN: the largest finite magnitude of its sign), the codes follow
the format's layout for known values, and the promotion flag picks the
format."""
import ctypes
import math
import random
import struct
import sys

N = 65536
lib = ctypes.CDLL(sys.argv[1])
F = ctypes.c_float * N
I8 = ctypes.c_int8 * N
I16 = ctypes.c_int16 * N
lib.codes.restype = None


def bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def from_bits(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


rng = random.Random(11)
values = [0.0, -0.0, 1.0, -1.0, 30.0, -30.0, 31.0, 1e30, -1e30, math.inf,
          -math.inf, math.nan, 2.0 ** -10, 2.0 ** -14, 2.0 ** -13,
          3 * 2.0 ** -14, 2.0 ** -30, 2.0 ** -39, 1.5, 0.1, 2.0 ** 32]
# Every exponent field, random mantissas and signs, and random bits.
for field in range(256):
    for _ in range(64):
        values.append(from_bits((rng.getrandbits(1) << 31) | (field << 23)
                                | rng.getrandbits(23)))
while len(values) < N:
    values.append(from_bits(rng.getrandbits(32)))
values = values[:N]

failures = []


def run(flag):
    x = F(*values)
    outs = [F(), F(), I8(), F(), F(), I16(), F(), F()]
    lib.codes(x, ctypes.c_bool(flag), *outs)
    return outs


def same(rounded, decoded, max_finite, what):
    bad = 0
    for i in range(N):
        r, d = rounded[i], decoded[i]
        want = r
        if math.isnan(r):
            want = math.copysign(max_finite, bits(r) >> 31 and -1.0 or 1.0)
        if bits(want) != bits(d):
            bad += 1
            if bad <= 5:
                failures.append(f"{what}: input {values[i]!r} rounded {r!r} "
                                f"decoded {d!r}")
    return bad


max8 = 30.0                              # FP(4,3,4)
max16 = (2 - 2.0 ** -9) * 2.0 ** 32      # FP(6,9,0)
outs = run(False)
same(outs[0], outs[1], max8, "FP(4,3,4) i8")
same(outs[3], outs[4], max16, "FP(6,9,0) i16")
same(outs[6], outs[7], max8, "promotable, low")
# Known codes: FP(4,3,4) has bias 11, so 1.0 is 0 1011 000 = 0x58, -30 is
# 1 1111 111 = 0xFF (-1 as i8), 2^-13 (the smallest subnormal) is 0x01;
# FP(6,9,0) has bias 31: 1.0 is 0 011111 000000000 = 0x3E00.
known = {1.0: (0x58, 0x3E00), -30.0: (-1, None), 2.0 ** -13: (0x01, None)}
for v, (c8, c16) in known.items():
    i = values.index(v)
    if outs[2][i] != (c8 if c8 < 128 else c8 - 256):
        failures.append(f"code of {v} in FP(4,3,4): {outs[2][i]:#x}")
    if c16 is not None and outs[5][i] != c16:
        failures.append(f"code of {v} in FP(6,9,0): {outs[5][i]:#x}")
outs = run(True)
same(outs[6], outs[7], max16, "promotable, promoted")
if bits(outs[7][values.index(1e30)]) != bits(from_bits(bits(max16))):
    failures.append("promoted 1e30 is not FP(6,9,0)'s largest value")

for f in failures:
    print("codes-check: FAIL " + f)
print(f"codes-check: {N} values, " + ("FAIL" if failures else "PASS"))
sys.exit(1 if failures else 0)
