#!/usr/bin/env bash
# Two ranks at bundle batch 64 against one process at batch 128, same data
# order (the seeded permutation of Fashion-MNIST, 12,800 samples: 100
# steps), fp32 LeNet, at lr 0.01 and qtrain-run's default 0.05. Prints the
# largest relative loss difference over the 100 steps, the first step where
# it passes 1e-3, and whether the ranks ended bit-identical.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${BUILD_DIR:-$root/build}/bin
source "$root/benchmarks/scale/mpirun.sh"
out=$(mktemp -d /tmp/qtrain-scale-curves.XXXXXX)
"$bin/qtrain-compile" "$root/examples/models/lenet.mlir" --policy=none --batch=64 -o "$out/b64.qtb" > /dev/null
"$bin/qtrain-compile" "$root/examples/models/lenet.mlir" --policy=none --batch=128 -o "$out/b128.qtb" > /dev/null
flags=(--train-limit=12800 --test-limit=1000 --epochs=1 --progress=none)
for lr in 0.01 0.05; do
  "${mpirun[@]}" -np 2 "$bin/qtrain-run" "$out/b64.qtb" "${flags[@]}" --lr=$lr --out="$out/dp-$lr" > "$out/dp-$lr.txt"
  "$bin/qtrain-run" "$out/b128.qtb" "${flags[@]}" --lr=$lr --out="$out/one-$lr" > /dev/null
  python3 - "$out/one-$lr/steps.csv" "$out/dp-$lr/steps.csv" "$lr" <<'PY'
import csv, sys
def losses(p):
    return [float(r["loss"]) for r in csv.DictReader(open(p))]
a, b, lr = losses(sys.argv[1]), losses(sys.argv[2]), sys.argv[3]
d = [abs(x - y) / abs(x) for x, y in zip(a, b)]
first = next((i for i, v in enumerate(d) if v > 1e-3), None)
print(f"lr {lr}: {len(d)} steps, largest relative difference {max(d):.2e} "
      f"(step {d.index(max(d))}); first above 1e-3: "
      f"{'none' if first is None else 'step %d' % first}")
PY
  grep "^all 2 ranks" "$out/dp-$lr.txt"
done
