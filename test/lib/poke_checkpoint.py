#!/usr/bin/env python3
"""Sets one float of a qtrain checkpoint and rewrites its CRC-32, so that
the result is a well-formed checkpoint holding that value.

    poke_checkpoint.py FILE BUFFER ELEMENT VALUE

BUFFER indexes the trainer's buffers (parameters, then momentum, then
state: Checkpoint.h), ELEMENT the float in it; VALUE is anything float()
reads ("nan", "inf", "1.5"). Reads checkpoint versions 1 and 2.
"""
import struct
import sys
import zlib

path, buffer, element, value = sys.argv[1], int(sys.argv[2]), int(
    sys.argv[3]), float(sys.argv[4])
data = bytearray(open(path, "rb").read())
assert data[:8] == b"QTRAINCK", "not a checkpoint"
version, size = struct.unpack_from("<II", data, 8)
pos = 16 + size + 8 + 8  # configuration, step, BitOps
if version >= 2:
    pos += 16  # epoch loss sum and count
(count,) = struct.unpack_from("<I", data, pos)
pos += 4
assert buffer < count, "the checkpoint has %d buffers" % count
for i in range(buffer):
    (n,) = struct.unpack_from("<Q", data, pos)
    pos += 8 + 4 * n
(n,) = struct.unpack_from("<Q", data, pos)
assert element < n, "buffer %d has %d floats" % (buffer, n)
struct.pack_into("<f", data, pos + 8 + 4 * element, value)
struct.pack_into("<I", data, len(data) - 4, zlib.crc32(bytes(data[:-4])))
open(path, "wb").write(data)
