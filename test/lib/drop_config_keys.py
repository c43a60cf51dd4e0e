#!/usr/bin/env python3
"""Removes entries from the run configuration a qtrain checkpoint records
and rewrites its size and CRC-32, making the checkpoint of an older
qtrain-run that did not record them yet.

    drop_config_keys.py FILE KEY...
"""
import json
import struct
import sys
import zlib

path, keys = sys.argv[1], sys.argv[2:]
data = bytearray(open(path, "rb").read())
assert data[:8] == b"QTRAINCK", "not a checkpoint"
version, size = struct.unpack_from("<II", data, 8)
config = json.loads(bytes(data[16:16 + size]))
for key in keys:
    del config[key]
text = json.dumps(config, separators=(",", ":")).encode()
data = data[:12] + struct.pack("<I", len(text)) + text + data[16 + size:]
struct.pack_into("<I", data, len(data) - 4, zlib.crc32(bytes(data[:-4])))
open(path, "wb").write(data)
