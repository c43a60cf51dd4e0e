"""Prints the PTX of the first gpu.binary object in MLIR text (the assembly
string of gpu-module-to-binary format=isa, unescaped); with --all FILE DIR
writes every object's PTX to DIR/N.ptx and prints their count; with
--check-cubin FILE describes a cubin's ELF header (class, byte order,
e_machine, and the sm_ of its flags)."""
import re
import struct
import sys

if sys.argv[1] == "--check-cubin":
    data = open(sys.argv[2], "rb").read()
    if data[:4] != b"\x7fELF":
        sys.exit("not an ELF file")
    klass = {1: "ELF32", 2: "ELF64"}[data[4]]
    order = {1: "little-endian", 2: "big-endian"}[data[5]]
    machine = struct.unpack_from("<H", data, 18)[0]
    flags = struct.unpack_from("<I", data, 48)[0]
    # CUDA 12 and newer keep the SM version in bits 8-15 of e_flags
    # (0x6005a04: sm_90), older toolkits in bits 0-7.
    sm = (flags >> 8) & 0xFF or flags & 0xFF
    name = " (EM_CUDA)" if machine == 190 else ""
    print(f"{klass} {order}, e_machine {machine}{name}, sm_{sm}")
    sys.exit(0)


def unescape(text):
    ptx = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)),
                 text)
    return ptx.replace('\\"', '"').replace("\\\\", "\\")


ASSEMBLY = r'assembly = "((?:[^"\\]|\\.)*)"'
if sys.argv[1] == "--all":
    import os
    objects = re.findall(ASSEMBLY, open(sys.argv[2]).read())
    os.makedirs(sys.argv[3], exist_ok=True)
    for i, text in enumerate(objects):
        with open(os.path.join(sys.argv[3], f"{i}.ptx"), "w") as f:
            f.write(unescape(text))
    print(f"{len(objects)} PTX modules")
    sys.exit(0)

match = re.search(ASSEMBLY, open(sys.argv[1]).read())
if not match:
    sys.exit("no gpu.binary with an assembly object")
sys.stdout.write(unescape(match.group(1)))
