"""qtrain-import-torch --check: the imported fp32 step against PyTorch's
autograd on the same weights and batch.

The model is imported, compiled with `qtrain-compile --policy=none` (the
fp32 step) and opened through libqtrain.so. One training step with
momentum 0 and weight decay 0 leaves each parameter's gradient in its
momentum buffer exactly (qtrain_trainer_get_momentum). qtrain's values and
PyTorch's fp32 values are each compared with PyTorch's in fp64 (the same
model and batch in double precision), as max|x - ref| / max|ref| (the
relative error in the max norm), for:
- the logits of the eval step (batch norm with its running statistics)
  with the model's in eval mode, before the step;
- the loss of the training step (batch statistics) with
  F.cross_entropy of the model in train mode;
- every parameter's gradient with PyTorch's .grad (each against at least
  1e-3 of the model's largest gradient: a gradient that is exactly zero
  in exact arithmetic, as a key projection's bias under softmax, is
  rounding noise in both);
- the batch norms' running statistics after the step.
Dropout is replayed: PyTorch's training step runs the traced graph with
each site's mask drawn from qtrain's Philox stream (philox.py) for the
same seed and step.
A value passes when qtrain's error is at most the tolerance (1e-4), or at
most NOISE_FACTOR (4) times PyTorch fp32's own error: deep batch-normed
networks at small batches amplify fp32 rounding (torchvision's resnet18
at batch 4 on 32x32 inputs: PyTorch fp32's gradients are 1.7e-4 from
fp64), and qtrain's step is then held to PyTorch's own accuracy.
"""
import copy
import os
import subprocess
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

from .lower import Importer
from .philox import dropout_keep
from .runtime import Trainer, tool_dir

DEFAULT_TOLERANCE = 1e-4
GRAD_FLOOR = 1e-3
NOISE_FACTOR = 4.0


def rel_error(ours, theirs, floor=0.0):
    """max|ours - theirs| / max(max|theirs|, floor)."""
    ours = np.asarray(ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    if ours.shape != theirs.shape:
        return float("inf")
    scale = max(np.abs(theirs).max() if theirs.size else 0.0, floor, 1e-30)
    return float(np.abs(ours - theirs).max() / scale) if theirs.size else 0.0


def check(module, example_input, tolerance=DEFAULT_TOLERANCE, seed=0, classes=None,
          max_id=None, workdir=None, compile_args=(), log=print, dropout="train"):
    """Runs the comparison; returns (passed, rows) where rows are
    (what, relative error)."""
    torch.manual_seed(seed)
    imp = Importer(module, example_input, dropout=dropout)
    text = imp.run()
    tmp = workdir or tempfile.mkdtemp(prefix="qtrain-check-")
    os.makedirs(tmp, exist_ok=True)
    mlir = os.path.join(tmp, "model.mlir")
    with open(mlir, "w") as f:
        f.write(text)
    bundle = os.path.join(tmp, "model.qtb")
    cmd = [os.path.join(tool_dir(), "qtrain-compile"), mlir, "--policy=none", "-o", bundle,
           *compile_args]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"qtrain-compile failed on the imported model ({mlir}):\n"
                           + done.stdout)
    trainer = Trainer(bundle, momentum=0.0, weight_decay=0.0, lr=0.01, seed=seed)
    try:
        return _compare(module, example_input, imp, trainer, tolerance, seed, classes,
                        max_id, log, dropout)
    finally:
        trainer.close()


class _Replay(torch.fx.Interpreter):
    """Runs the traced model with each dropout site's mask replayed from
    qtrain's Philox stream (philox.py) instead of PyTorch's RNG."""

    def __init__(self, gm, sites, seed, step):
        super().__init__(gm)
        self.sites = {name: (k, p) for k, (name, p) in enumerate(sites)}
        self.seed, self.step = seed, step

    def run_node(self, n):
        if n.name not in self.sites:
            return super().run_node(n)
        args, _ = self.fetch_args_kwargs_from_env(n)
        x = args[0]
        k, p = self.sites[n.name]
        keep = torch.from_numpy(dropout_keep(self.seed, k, self.step, tuple(x.shape), p))
        scale = float(np.float32(1.0) / np.float32(1.0 - p)) if x.dtype == torch.float32 \
            else 1.0 / (1.0 - p)
        return torch.where(keep, x * scale, torch.zeros((), dtype=x.dtype))


def _reference(module, x, labels, dtype, dropout, imp=None, seed=0):
    """PyTorch's eval logits, train loss, gradients and running statistics
    of a copy of `module` in `dtype`; the training step replays qtrain's
    dropout masks (step 0, `seed`) on the importer's traced graph."""
    model = copy.deepcopy(module).to(dtype)
    xx = x.to(dtype) if x.is_floating_point() else x
    if dropout == "off":
        # The imported model leaves dropout out: so does the reference.
        for m in model.modules():
            if isinstance(m, torch.nn.modules.dropout._DropoutNd):
                m.p = 0.0
    model.eval()
    with torch.no_grad():
        logits = model(xx).double().numpy()
    sites = imp.dropout_sites if imp is not None else []
    if sites:
        model = copy.deepcopy(imp.gm).to(dtype)
    model.train()
    model.zero_grad()
    out = _Replay(model, sites, seed, 0).run(xx) if sites else model(xx)
    loss = F.cross_entropy(out, labels)
    loss.backward()
    grads = {n: (p.grad.double().numpy() if p.grad is not None else
                 np.zeros(tuple(p.shape))) for n, p in model.named_parameters()}
    buffers = {n: b.double().numpy() for n, b in model.named_buffers()}
    return logits, float(loss.item()), grads, buffers


def _compare(module, example_input, imp, trainer, tolerance, seed, classes, max_id, log,
             dropout="train"):
    params, batchnorms = imp.params, imp.batchnorms
    gen = torch.Generator().manual_seed(seed + 1)
    batch = trainer.info.batch
    classes = trainer.info.classes
    if example_input.dtype == torch.int64:
        top = max_id if max_id is not None else 1
        x = torch.randint(0, top + 1, tuple(example_input.shape), generator=gen)
    else:
        x = torch.randn(tuple(example_input.shape), generator=gen)
    labels = torch.randint(0, classes, (batch,), generator=gen)

    exact = _reference(module, x, labels, torch.float64, dropout, imp, seed)
    single = _reference(module, x, labels, torch.float32, dropout, imp, seed)
    logits = trainer.eval(x.numpy(), bits=0)
    loss = trainer.step(x.numpy(), labels.numpy())
    grads = []
    for i, p in enumerate(params):
        _, grad = trainer.momentum(i)
        grads.append((p["name"], grad.reshape(p["torch_shape"])))
    state = [trainer.state(s)[1] for s in range(trainer.info.num_state)]

    # (what, qtrain's value, PyTorch fp32's, the fp64 reference, floor)
    items = [("logits (eval)", logits, single[0], exact[0], 0.0),
             ("loss (train)", np.float64(loss), single[1], exact[1], 0.0)]
    # A gradient that is zero in exact arithmetic (a key's bias under
    # softmax) is rounding noise: its error is measured against GRAD_FLOOR
    # of the largest gradient of the model.
    largest = max([float(np.abs(g).max()) for g in exact[2].values() if g.size] + [0.0])
    for name, grad in grads:
        items.append((f"grad {name}", grad, single[2][name], exact[2][name],
                      GRAD_FLOOR * largest))
    if len(state) == 2 * len(batchnorms):
        # Likewise a running mean that is zero in exact arithmetic (a 1x1
        # conv of a batch norm's zero-mean output): at least GRAD_FLOOR of
        # the largest running mean.
        top = max([float(np.abs(exact[3][m]).max()) for m, _ in batchnorms] + [0.0])
        for k, (mean, var) in enumerate(batchnorms):
            items.append((f"running mean #{k} ({mean})", state[2 * k], single[3][mean],
                          exact[3][mean], GRAD_FLOOR * top))
            items.append((f"running var #{k} ({var})", state[2 * k + 1], single[3][var],
                          exact[3][var], 0.0))
    rows = []
    passed = True
    log(f"  {'':52} {'qtrain':>10} {'PyTorch':>10}   (relative error against PyTorch in fp64)")
    for what, ours, theirs, ref, floor in items:
        q = rel_error(ours, ref, floor)
        t = rel_error(theirs, ref, floor)
        ok = q <= max(tolerance, NOISE_FACTOR * t)
        passed = passed and ok
        rows.append((what, q, t))
        log(f"  {what:52} {q:10.3e} {t:10.3e}{'' if ok else '   FAIL'}")
    worst = max(rows, key=lambda r: r[1])
    log(f"largest relative error {worst[1]:.3e} ({worst[0]}; PyTorch fp32: {worst[2]:.3e}); "
        f"tolerance {tolerance:g} or {NOISE_FACTOR:g}x PyTorch fp32's: "
        f"{'PASS' if passed else 'FAIL'}")
    return passed, rows
