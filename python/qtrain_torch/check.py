"""qtrain-import-torch --check: the imported fp32 step against PyTorch's
autograd on the same weights and batch.

The model is imported, compiled with `qtrain-compile --policy=none` (the
fp32 step) and opened through libqtrain.so. One training step with
momentum 0 and weight decay 0 leaves each parameter's gradient in its
momentum buffer exactly (qtrain_trainer_get_momentum). Compared, each as
max|qtrain - torch| / max|torch| (the relative error in the max norm):
- the logits of the eval step (batch norm with its running statistics)
  with the model's in eval mode, before the step;
- the loss of the training step (batch statistics) with
  F.cross_entropy of the model in train mode;
- every parameter's gradient with PyTorch's .grad (each against at least
  1e-3 of the model's largest gradient: a gradient that is exactly zero
  in exact arithmetic, as a key projection's bias under softmax, is
  rounding noise in both);
- the batch norms' running statistics after the step.
"""
import copy
import os
import subprocess
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

from .lower import Importer
from .runtime import Trainer, tool_dir

DEFAULT_TOLERANCE = 1e-4
GRAD_FLOOR = 1e-3


def rel_error(ours, theirs, floor=0.0):
    """max|ours - theirs| / max(max|theirs|, floor)."""
    ours = np.asarray(ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    if ours.shape != theirs.shape:
        return float("inf")
    scale = max(np.abs(theirs).max() if theirs.size else 0.0, floor, 1e-30)
    return float(np.abs(ours - theirs).max() / scale) if theirs.size else 0.0


def check(module, example_input, tolerance=DEFAULT_TOLERANCE, seed=0, classes=None,
          max_id=None, workdir=None, compile_args=(), log=print, dropout="error"):
    """Runs the comparison; returns (passed, rows) where rows are
    (what, relative error)."""
    torch.manual_seed(seed)
    imp = Importer(module, example_input, dropout=dropout)
    text = imp.run()
    params = imp.params
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
        return _compare(module, example_input, params, imp.batchnorms, trainer, tolerance,
                        seed, classes, max_id, log)
    finally:
        trainer.close()


def _compare(module, example_input, params, batchnorms, trainer, tolerance, seed, classes, max_id, log):
    gen = torch.Generator().manual_seed(seed + 1)
    batch = trainer.info.batch
    classes = trainer.info.classes
    if example_input.dtype == torch.int64:
        top = max_id if max_id is not None else 1
        x = torch.randint(0, top + 1, tuple(example_input.shape), generator=gen)
    else:
        x = torch.randn(tuple(example_input.shape), generator=gen)
    labels = torch.randint(0, classes, (batch,), generator=gen)
    rows = []

    eval_model = copy.deepcopy(module).eval()
    with torch.no_grad():
        ref_logits = eval_model(x).numpy()
    logits = trainer.eval(x.numpy(), bits=0)
    rows.append(("logits (eval)", rel_error(logits, ref_logits)))

    train_model = copy.deepcopy(module).train()
    train_model.zero_grad()
    ref_loss = F.cross_entropy(train_model(x), labels)
    ref_loss.backward()
    loss = trainer.step(x.numpy(), labels.numpy())
    rows.append(("loss (train)", rel_error(np.float32(loss), ref_loss.item())))

    named = dict(train_model.named_parameters())
    grads = []
    for i, p in enumerate(params):
        name, grad = trainer.momentum(i)
        ref = named[p["name"]].grad
        ref = np.zeros(p["torch_shape"], np.float32) if ref is None else ref.numpy()
        grads.append((p["name"], grad.reshape(p["torch_shape"]), ref))
    # A gradient that is zero in exact arithmetic (a key's bias under
    # softmax) is rounding noise in both: its error is measured against
    # GRAD_FLOOR of the largest gradient of the model.
    largest = max([float(np.abs(r).max()) for _, _, r in grads if r.size] + [0.0])
    for name, grad, ref in grads:
        rows.append((f"grad {name}", rel_error(grad, ref, GRAD_FLOOR * largest)))

    # Running statistics: the bundle's bn_mean/bn_var state in graph order.
    bn_state = [trainer.state(s) for s in range(trainer.info.num_state)]
    named_buffers = dict(train_model.named_buffers())
    buffers = [(named_buffers[m], named_buffers[v]) for m, v in batchnorms]
    if len(bn_state) == 2 * len(buffers):
        for k, (mean, var) in enumerate(buffers):
            rows.append((f"running mean #{k}", rel_error(bn_state[2 * k][1], mean.numpy())))
            rows.append((f"running var #{k}", rel_error(bn_state[2 * k + 1][1], var.numpy())))
    worst = max(rows, key=lambda r: r[1])
    passed = worst[1] <= tolerance
    for what, err in rows:
        log(f"  {what:48} {err:.3e}")
    log(f"largest relative error {worst[1]:.3e} ({worst[0]}); tolerance {tolerance:g}: "
        f"{'PASS' if passed else 'FAIL'}")
    return passed, rows


