#!/usr/bin/env bash
# The main job, as far as it exists today: check the data, verify the example
# model, and show the precision schedule a CPT 3-8/8 run would follow.
# It says plainly what it cannot do yet; it never pretends to train.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
bin=$build_dir/bin
data=${QTRAIN_DATA_DIR:-/usr/share/datasets/fashion-mnist}
epochs=5
batch=128

step() { printf '\n== %s\n' "$*"; }

step "1. Fashion-MNIST in $data"
python3 - "$data" <<'PY'
import gzip, struct, sys, os
root = sys.argv[1]
files = {"train-images-idx3-ubyte": 2051, "train-labels-idx1-ubyte": 2049,
         "t10k-images-idx3-ubyte": 2051, "t10k-labels-idx1-ubyte": 2049}
for name, magic in files.items():
    path = next((os.path.join(root, name + ext) for ext in (".gz", "")
                 if os.path.exists(os.path.join(root, name + ext))), None)
    if path is None:
        sys.exit(f"demo: {name}[.gz] not found in {root}; install the Debian "
                 "package dataset-fashion-mnist (scripts/setup.sh does)")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        head = f.read(16)
    got, count = struct.unpack(">II", head[:8])
    if got != magic:
        sys.exit(f"demo: {path} is not an IDX file (magic {got:#x}, expected {magic:#x})")
    print(f"  {os.path.basename(path)}: {count} items")
PY

step "2. The example model examples/models/lenet.mlir parses and verifies"
"$bin/qtrain-opt" "$root/examples/models/lenet.mlir" -o /dev/null
echo "  ok: $(grep -c '{qtrain.param}' "$root/examples/models/lenet.mlir") parameters, forward graph at batch $batch"

steps_per_epoch=$(( (60000 + batch - 1) / batch ))
total=$(( steps_per_epoch * epochs ))
step "3. The CPT 3-8/8 schedule of a $epochs-epoch run ($total steps at batch $batch)"
"$bin/qtrain-schedule" cpt:3:8 --steps="$total" --grad-bits=8 --every=$(( total / 8 ))

step "4. Not done yet"
cat <<'TXT'
  qtrain-autodiff / qtrain-insert-quant (training step from the forward graph),
  qtrain-compile (per-bitwidth kernels + bundle) and qtrain-run (training on
  Fashion-MNIST) do not exist yet, so no model was compiled or trained and no
  accuracy is reported. See README.md, "Status".
TXT
