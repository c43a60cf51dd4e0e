#!/usr/bin/env python3
"""Flips the lowest bit of the middle byte of FILE (corrupting it in place).

    flip_byte.py FILE
"""
import sys

data = bytearray(open(sys.argv[1], "rb").read())
data[len(data) // 2] ^= 1
open(sys.argv[1], "wb").write(data)
