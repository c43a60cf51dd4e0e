"""qtrain-import-torch: a PyTorch model becomes the forward graph that
qtrain-compile takes.

  qtrain-import-torch MODEL.py:Factory --input-shape=128x1x28x28 -o model.mlir
  qtrain-import-torch torchvision:resnet18 --num-classes=10 --input-shape=16x3x32x32 -o r18.mlir
  qtrain-import-torch MODEL.py:Factory --input-shape=4x1x28x28 --check

MODEL.py:Factory names a class or a function in a Python file (or an
importable module, package.module:Factory) that returns a torch.nn.Module;
torchvision:NAME a torchvision.models constructor (no pretrained weights).
The module is built after torch.manual_seed(--seed), so its initial weights
are reproducible; they are the bundle's initial values.
"""
import argparse
import importlib
import importlib.util
import os
import sys

import torch

from .lower import Importer, UnsupportedError


def _fail(message, code=1):
    print(f"qtrain-import-torch: error: {message}", file=sys.stderr)
    sys.exit(code)


def load_factory(spec):
    if ":" not in spec:
        _fail(f"'{spec}': expected FILE.py:Factory, package.module:Factory or torchvision:NAME", 2)
    where, name = spec.rsplit(":", 1)
    if where == "torchvision":
        try:
            import torchvision.models as models
        except ImportError:
            _fail("torchvision is not installed (Debian: python3-torchvision)")
        factory = getattr(models, name, None)
        if factory is None or not callable(factory):
            _fail(f"torchvision.models has no model '{name}'")
        return factory, True
    if where.endswith(".py"):
        if not os.path.isfile(where):
            _fail(f"{where}: no such file")
        mod_name = "qtrain_user_" + os.path.splitext(os.path.basename(where))[0]
        s = importlib.util.spec_from_file_location(mod_name, where)
        module = importlib.util.module_from_spec(s)
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        try:
            s.loader.exec_module(module)
        except Exception as e:
            _fail(f"{where}: {type(e).__name__}: {e}")
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as e:
            _fail(f"cannot import '{where}': {e}")
    factory = getattr(module, name, None)
    if factory is None or not callable(factory):
        _fail(f"{where} has no class or function '{name}'")
    return factory, False


def build_model(spec, num_classes, kwargs_text):
    factory, torchvision = load_factory(spec)
    kwargs = {}
    if kwargs_text:
        import json
        try:
            kwargs = json.loads(kwargs_text)
        except ValueError as e:
            _fail(f"--kwargs: not JSON: {e}", 2)
        if not isinstance(kwargs, dict):
            _fail("--kwargs: expected a JSON object", 2)
    if num_classes is not None:
        kwargs["num_classes"] = num_classes
    if torchvision:
        kwargs.setdefault("weights", None)
    try:
        model = factory(**kwargs)
    except TypeError as e:
        _fail(f"{spec}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())}): {e}")
    if not isinstance(model, torch.nn.Module):
        _fail(f"{spec} returned {type(model).__name__}, not a torch.nn.Module")
    return model


def parse_shape(text):
    try:
        shape = [int(d) for d in text.lower().split("x")]
    except ValueError:
        _fail(f"--input-shape: expected sizes like 128x1x28x28, got '{text}'", 2)
    if not shape or any(d < 1 for d in shape):
        _fail(f"--input-shape: every size must be at least 1, got '{text}'", 2)
    return shape


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="qtrain-import-torch", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="FILE.py:Factory, package.module:Factory or torchvision:NAME")
    ap.add_argument("--input-shape", required=True,
                    help="the input batch, N x ... (N: the training batch), e.g. 128x1x28x28")
    ap.add_argument("--input-dtype", choices=["f32", "i64"], default="f32",
                    help="float32 features (default) or int64 token ids")
    ap.add_argument("--max-id", type=int, default=None,
                    help="with --input-dtype=i64 and --check: the largest token id drawn")
    ap.add_argument("--num-classes", type=int, default=None,
                    help="passed to the factory as num_classes=")
    ap.add_argument("--kwargs", default=None, help="more factory arguments, a JSON object")
    ap.add_argument("--seed", type=int, default=0,
                    help="torch.manual_seed before the model is built (default 0)")
    ap.add_argument("--dropout", choices=["train", "off"], default="train",
                    help="train-time dropout: as PyTorch trains it, with a replayable mask "
                         "(default), or left out (off)")
    ap.add_argument("-o", "--output", default=None, help="the MLIR file (default: stdout)")
    ap.add_argument("--check", action="store_true",
                    help="compile the fp32 step and compare it with PyTorch's autograd")
    ap.add_argument("--tolerance", type=float, default=None,
                    help="--check's largest relative error (default 1e-4)")
    ap.add_argument("--workdir", default=None, help="--check's files (default: a temporary dir)")
    args = ap.parse_args(argv)

    torch.manual_seed(args.seed)
    shape = parse_shape(args.input_shape)
    model = build_model(args.model, args.num_classes, args.kwargs)
    example = torch.zeros(shape, dtype=torch.int64 if args.input_dtype == "i64" else torch.float32)
    try:
        imp = Importer(model, example, dropout=args.dropout)
        text = imp.run()
    except UnsupportedError as e:
        _fail(str(e))
    for note in imp.notes:
        print(f"qtrain-import-torch: note: {note}", file=sys.stderr)
    if args.output:
        tmp = args.output + ".partial"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, args.output)
    elif not args.check:
        sys.stdout.write(text)
    if args.check:
        from .check import DEFAULT_TOLERANCE, check
        tol = DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance
        try:
            passed, _ = check(model, example, tolerance=tol, seed=args.seed, max_id=args.max_id,
                              workdir=args.workdir, dropout=args.dropout)
        except (RuntimeError, OSError) as e:
            _fail(str(e))
        sys.exit(0 if passed else 1)
    return 0


if __name__ == "__main__":
    main()
