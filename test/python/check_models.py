"""Runs qtrain-import-torch --check on models of op_models.py and
models.py, printing one line per model: "NAME: PASS (err)" or the failure.

    check_models.py [--batch=4] NAME...
Exit status 1 if any fails.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_models  # noqa: E402

from qtrain_torch.check import check  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="+")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    failed = 0
    for name in args.names:
        torch.manual_seed(0)
        dropout = "train"
        if name in op_models.MODELS:
            model = op_models.MODELS[name]()
            if name in op_models.IDS:
                example = torch.zeros(args.batch, 6, dtype=torch.int64)
                max_id = 19
            else:
                example = torch.zeros(args.batch, op_models.C, op_models.H, op_models.W)
                max_id = None
        else:
            import models
            model, example = models.MODELS[name](args.batch)
            max_id = None
        lines = []
        work = os.path.join(args.workdir, name) if args.workdir else None
        try:
            passed, rows = check(model, example, max_id=max_id, workdir=work,
                                 log=lines.append, dropout=dropout)
        except Exception as e:  # the message is the test's output
            print(f"{name}: ERROR {type(e).__name__}: {e}")
            failed += 1
            continue
        worst = max(rows, key=lambda r: r[1])
        print(f"{name}: {'PASS' if passed else 'FAIL'} {worst[1]:.2e} ({worst[0]}; "
              f"PyTorch fp32 {worst[2]:.2e})")
        if not passed:
            print("\n".join(lines))
            failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
