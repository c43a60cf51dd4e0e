#!/usr/bin/env python3
"""Prints a forward graph whose body nests N scf.execute_region ops, each
inside the region of the one before (issue 18: 5,000 of them overflowed
the stack of qtrain-compile and qtrain-opt).

    nest.py N
"""
import sys

n = int(sys.argv[1])
t = "tensor<2x4xf32>"
print("func.func @forward(%%w: tensor<4x4xf32> {qtrain.param}, %%x: %s) -> %s {"
      % (t, t))
for i in range(n):
    print("  %%r%d = scf.execute_region -> %s {" % (i, t))
print("  scf.yield %%x : %s" % t)
for i in range(n - 1, -1, -1):
    print("  }")
    if i > 0:
        print("  scf.yield %%r%d : %s" % (i, t))
print("  return %%r0 : %s" % t)
print("}")
