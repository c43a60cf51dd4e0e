"""Checks a bundle's CUDA target against its manifest and prints a summary:
the module's SHA-256, that every kernel's name is in the module, each
site's products and kinds, the fp8 operand encodings by product, and that
each kernel's launch covers C in tiles of 64 rows (32 columns for f32, 8 per
tensor-core tile for the others, up to 32) of 128 threads (its grid's z the
batch times the splits of k), and the products that split k."""
import hashlib
import json
import os
import sys

bundle = sys.argv[1]
m = json.load(open(os.path.join(bundle, "manifest.json")))
cuda = m["cuda"]
data = open(os.path.join(bundle, cuda["module"]), "rb").read()
sha = "ok" if hashlib.sha256(data).hexdigest() == cuda["module_sha256"] else "MISMATCH"
kernels = {k["name"]: k for k in cuda["kernels"]}
named = all(name.encode() in data for name in kernels)
print(f"cuda {cuda['chip']} {cuda['format']} {cuda['module']}: sha256 {sha}, "
      f"{len(kernels)} kernels, "
      + ("every kernel named in the module" if named else "a kernel is MISSING"))
fp8 = {}
for site in m["sites"]:
    products = site.get("cuda", {})
    kinds = sorted({kind for p in products.values() for kind in p})
    print(f"{site['name']}: {' '.join(sorted(products))}: {' '.join(kinds)}")
    for product, byKind in products.items():
        for kind, name in byKind.items():
            if kernels[name]["kind"] != kind:
                print(f"{site['name']} {product} {kind}: kernel {name} is {kernels[name]['kind']}")
        if "fp8" in byKind:
            k = kernels[byKind["fp8"]]
            fp8.setdefault(product, set()).add(f"{k['a']}x{k['b']}")
print("fp8 operands: " + ", ".join(
    f"{p} {' '.join(sorted(fp8[p]))}" for p in ("forward", "input_grad", "weight_grad") if p in fp8))
def splits(k):
    """How many ways the kernel splits k: its grid's z over the batch, which
    its name states when more than one."""
    z = k["grid"][2]
    s = z // k["batch"]
    named = k["name"].endswith(f"_s{s}") if s > 1 else "_s" not in k["name"].split("_k")[-1]
    return s if z % k["batch"] == 0 and named else None

def tile_n(k):
    """Columns of C per block: 32 for f32, 8 per tensor-core tile (at most
    four) for the others."""
    return 32 if k["kind"] == "f32" else 8 * min(4, -(-k["n"] // 8))

ok = all(k["block"] == [128, 1, 1] and splits(k) and
         k["grid"][:2] == [-(-k["n"] // tile_n(k)), -(-k["m"] // 64)]
         for k in kernels.values())
print("launch: " + ("every grid covers its 64-row tiles, block 128" if ok else "a launch is WRONG"))
narrow = sorted({(k["n"], tile_n(k)) for k in kernels.values() if tile_n(k) < 32})
print("narrow tiles: " + ", ".join(f"n {n} in {t} columns" for n, t in narrow))
split = sorted({(k["m"], k["n"], k["k"], splits(k)) for k in kernels.values()
                if (splits(k) or 1) > 1})
print("split k: " + (", ".join(f"m {m} n {n} k {kk} in {s}" for m, n, kk, s in split)
                     if split else "none"))
