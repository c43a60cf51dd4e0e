#!/usr/bin/env bash
# device-prepare.sh - builds here what scripts/device-check.sh runs on a
# lent GPU machine (../.library/device), into device-carry/ (ignored by git;
# carry it with the run):
#
#   scripts/device-prepare.sh            then, on the device (carry
#                                        device-carry): scripts/device-check.sh
#
# device-carry/ holds qtrain-run and qtrain-cuda-check, the bundles (LeNet
# and ConvNet, CPT 3-8/8, --target=cuda:sm_90; in mixed/, the same models
# in fp32 with bf16 products; in formats/, LeNet under the
# float formats of PAPERS.md section 4, its products on fp8, bf16 and f32;
# in e5m2/, ConvNet with CPT's errors in fp8, --grad-format=e5m2, and its
# input gradients on fp8 too, --input-grad=fp8 (E5M2_INPUT_GRAD); in
# serial/, LeNet with its reductions unsplit, --cuda-reduction-fan-in=0),
# the first 25,600 training
# and 2,000 test images of Fashion-MNIST (200 steps of batch 128) and the
# shared libraries the programs and the bundles' model.so need beyond the C
# and C++ runtimes, gzipped (the device image has neither Debian's oneDNN
# nor LLVM's libomp). The device tool carries at most 64 MiB; this checks
# that it fits.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
carry=$root/device-carry
chip=${CHIP:-sm_90}
models=${MODELS:-lenet convnet}

cmake --build "$build" --target qtrain-run qtrain-cuda-check qtrain-compile
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/bundles" "$carry/lib" "$carry/data"
cp "$build/bin/qtrain-run" "$build/bin/qtrain-cuda-check" "$carry/bin/"
for model in $models; do
  "$build/bin/qtrain-compile" "$root/examples/models/$model.mlir" \
    -o "$carry/bundles/$model.qtb" --target=cuda:"$chip"
done
# The mixed-precision step the fixed-point steps are measured against: the
# same models in fp32 (no kernel sites), their products on bf16.
mkdir -p "$carry/mixed"
for model in $models; do
  "$build/bin/qtrain-compile" "$root/examples/models/$model.mlir" \
    -o "$carry/mixed/$model.qtb" --target=cuda:"$chip" --policy=none \
    --cuda-f32-kind=bf16
done
# The float-format step (all groups low), its products on the fp8 tensor
# cores, on bf16 (exact operands) and on f32.
mkdir -p "$carry/formats"
for model in ${FORMAT_MODELS:-lenet}; do
  for kind in fp8 bf16 f32; do
    "$build/bin/qtrain-compile" "$root/examples/models/$model.mlir" \
      -o "$carry/formats/$model-$kind.qtb" --target=cuda:"$chip" \
      --precision-ratio=1 --cuda-float-kind=$kind
  done
done

# CPT with fp8 errors (--grad-format=e5m2): the weight gradients, and the
# input gradients folded by --input-grad=fp8, on the fp8 (e5m2 x e4m3, up
# to 5 bits) and bf16 tensor cores.
mkdir -p "$carry/e5m2"
for model in ${E5M2_MODELS:-convnet}; do
  "$build/bin/qtrain-compile" "$root/examples/models/$model.mlir" \
    -o "$carry/e5m2/$model.qtb" --target=cuda:"$chip" --grad-format=e5m2 \
    --input-grad="${E5M2_INPUT_GRAD:-fp8}"
done
# The step with every reduction on one thread per output (no split
# reductions, --cuda-reduction-fan-in=0): what splitting them gains.
mkdir -p "$carry/serial"
for model in ${SERIAL_MODELS:-lenet}; do
  "$build/bin/qtrain-compile" "$root/examples/models/$model.mlir" \
    -o "$carry/serial/$model.qtb" --target=cuda:"$chip" --cuda-reduction-fan-in=0
done
# The data: IDX files cut to what 200 steps and the evaluation read.
/usr/bin/python3 - "$carry/data" <<'PY'
import gzip, struct, sys
src = "/usr/share/datasets/fashion-mnist"
out = sys.argv[1]
for split, count in (("train", 25600), ("t10k", 2000)):
    for kind, item in (("images-idx3", 28 * 28), ("labels-idx1", 1)):
        name = f"{split}-{kind}-ubyte.gz"
        data = gzip.open(f"{src}/{name}").read()
        header = 16 if kind.startswith("images") else 8
        head = bytearray(data[:header])
        struct.pack_into(">I", head, 4, count)
        with gzip.open(f"{out}/{name}", "wb") as f:
            f.write(bytes(head) + data[header:header + count * item])
PY

# Shared libraries beyond the C and C++ runtimes, which the device has.
system='linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+|libgcc_s'
for object in "$carry"/bin/* "$carry"/{bundles,mixed,formats,e5m2,serial}/*/model.so; do
  ldd "$object" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -Ev "$system" | while read -r lib; do
  gzip -9 -c "$lib" > "$carry/lib/$(basename "$lib").gz"
done

size=$(du -sm "$carry" | cut -f1)
echo "device-prepare: $carry holds ${size} MiB:"
du -sh "$carry"/* | sed 's/^/  /'
if ((size > 60)); then
  echo "device-prepare: error: over the 60 MiB the device tool can carry" >&2
  exit 1
fi
