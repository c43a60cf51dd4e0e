"""What each supported torch.nn module, function and Tensor method becomes.

Handlers take the Importer (lower.py), the fx node and the node's
arguments as importer values (Tensors for tensors, Python values for the
rest) and return the result's value.
"""
import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from .mlir import Tensor


# Activations: the scalar body on %x, yielding %y (constants through c()).

def _relu(c):
    return [f"%y = arith.maximumf %x, {c(0.0)} : f32"]


def _relu6(c):
    return [f"%t1 = arith.maximumf %x, {c(0.0)} : f32", f"%y = arith.minimumf %t1, {c(6.0)} : f32"]


def _leaky_relu(slope):
    def body(c):
        return [f"%t1 = arith.cmpf ogt, %x, {c(0.0)} : f32",
                f"%t2 = arith.mulf %x, {c(slope)} : f32",
                "%y = arith.select %t1, %x, %t2 : f32"]
    return body


def _gelu(approximate):
    def body(c):
        if approximate == "tanh":
            return ["%t1 = arith.mulf %x, %x : f32", "%t2 = arith.mulf %t1, %x : f32",
                    f"%t3 = arith.mulf %t2, {c(0.044715)} : f32", "%t4 = arith.addf %x, %t3 : f32",
                    f"%t5 = arith.mulf %t4, {c(math.sqrt(2.0 / math.pi))} : f32",
                    "%t6 = math.tanh %t5 : f32", f"%t7 = arith.addf %t6, {c(1.0)} : f32",
                    f"%t8 = arith.mulf %x, {c(0.5)} : f32", "%y = arith.mulf %t8, %t7 : f32"]
        return [f"%t1 = arith.mulf %x, {c(1.0 / math.sqrt(2.0))} : f32", "%t2 = math.erf %t1 : f32",
                f"%t3 = arith.addf %t2, {c(1.0)} : f32", f"%t4 = arith.mulf %x, {c(0.5)} : f32",
                "%y = arith.mulf %t4, %t3 : f32"]
    return body


def _sigmoid(c):
    return ["%t1 = arith.negf %x : f32", "%t2 = math.exp %t1 : f32",
            f"%t3 = arith.addf %t2, {c(1.0)} : f32", f"%y = arith.divf {c(1.0)}, %t3 : f32"]


def _silu(c):
    return ["%t1 = arith.negf %x : f32", "%t2 = math.exp %t1 : f32",
            f"%t3 = arith.addf %t2, {c(1.0)} : f32", "%y = arith.divf %x, %t3 : f32"]


def _tanh(c):
    return ["%y = math.tanh %x : f32"]


def _hardsigmoid(c):
    return [f"%t1 = arith.addf %x, {c(3.0)} : f32", f"%t2 = arith.maximumf %t1, {c(0.0)} : f32",
            f"%t3 = arith.minimumf %t2, {c(6.0)} : f32", f"%y = arith.divf %t3, {c(6.0)} : f32"]


def _hardswish(c):
    return [f"%t1 = arith.addf %x, {c(3.0)} : f32", f"%t2 = arith.maximumf %t1, {c(0.0)} : f32",
            f"%t3 = arith.minimumf %t2, {c(6.0)} : f32", "%t4 = arith.mulf %x, %t3 : f32",
            f"%y = arith.divf %t4, {c(6.0)} : f32"]


def _activation(body_of, prefix):
    def handler(imp, node, x, *rest, **kwargs):
        return imp.unary(x, body_of(imp.fn.f32), prefix)
    return handler


def _module_activation(body_of, prefix):
    def handler(imp, m, node, x):
        return imp.unary(x, body_of(imp.fn.f32), prefix)
    return handler


# Modules.

def _conv2d(imp, m, node, x):
    if m.padding_mode != "zeros":
        imp.fail(f"padding_mode='{m.padding_mode}' (only zeros)")
    return imp.conv2d(x, m.weight, m.bias, m.stride, m.padding, m.dilation, m.groups)


def _linear(imp, m, node, x):
    return imp.linear(x, m.weight, m.bias)


def _batchnorm(imp, m, node, x):
    if isinstance(m, nn.BatchNorm1d) and imp.as_tensor(x).rank != 2:
        imp.fail("BatchNorm1d of a sequence (N x C x L)")
    return imp.batch_norm(x, m.running_mean, m.running_var, m.weight, m.bias, True,
                          m.momentum, m.eps, type(m).__name__)


def _layernorm(imp, m, node, x):
    return imp.layer_norm(x, m.normalized_shape, m.weight, m.bias, m.eps)


def _maxpool(imp, m, node, x):
    if m.return_indices:
        imp.fail("return_indices=True")
    return imp.pool("max", x, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode)


def _avgpool(imp, m, node, x):
    return imp.pool("avg", x, m.kernel_size, m.stride, m.padding, 1, m.ceil_mode,
                    m.count_include_pad, m.divisor_override)


def _adaptive_avg(imp, m, node, x):
    return imp.adaptive_avg_pool(x, m.output_size)


def _identity(imp, m, node, x, *rest):
    return x


def _dropout(imp, m, node, x):
    return imp.dropout(x, m.p)


def _flatten(imp, m, node, x):
    return _flatten_fn(imp, node, x, m.start_dim, m.end_dim)


def _softmax_module(log):
    def handler(imp, m, node, x):
        return imp.softmax(x, m.dim if m.dim is not None else -1, log)
    return handler


def _embedding(imp, m, node, ids):
    return imp.embedding(ids, m.weight, m.padding_idx, m.max_norm)


MODULES = {
    nn.Conv2d: _conv2d,
    nn.Linear: _linear,
    nn.BatchNorm2d: _batchnorm,
    nn.BatchNorm1d: _batchnorm,
    nn.LayerNorm: _layernorm,
    nn.MaxPool2d: _maxpool,
    nn.AvgPool2d: _avgpool,
    nn.AdaptiveAvgPool2d: _adaptive_avg,
    nn.ReLU: _module_activation(_relu, "relu"),
    nn.ReLU6: _module_activation(_relu6, "relu6"),
    nn.Sigmoid: _module_activation(_sigmoid, "sigmoid"),
    nn.Tanh: _module_activation(_tanh, "tanh"),
    nn.SiLU: _module_activation(_silu, "silu"),
    nn.Hardswish: _module_activation(_hardswish, "hardswish"),
    nn.Hardsigmoid: _module_activation(_hardsigmoid, "hardsigmoid"),
    nn.Identity: _identity,
    nn.Dropout: _dropout,
    nn.Flatten: _flatten,
    nn.Softmax: _softmax_module(False),
    nn.LogSoftmax: _softmax_module(True),
    nn.Embedding: _embedding,
}


def _leaky_module(imp, m, node, x):
    return imp.unary(x, _leaky_relu(m.negative_slope)(imp.fn.f32), "lrelu")


def _gelu_module(imp, m, node, x):
    return imp.unary(x, _gelu(getattr(m, "approximate", "none"))(imp.fn.f32), "gelu")


MODULES[nn.LeakyReLU] = _leaky_module
MODULES[nn.GELU] = _gelu_module


# Functions.

def _f_conv2d(imp, node, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return imp.conv2d(x, weight, bias, stride, padding, dilation, groups)


def _f_linear(imp, node, x, weight, bias=None):
    return imp.linear(x, weight, bias)


def _f_batch_norm(imp, node, x, running_mean, running_var, weight=None, bias=None,
                  training=False, momentum=0.1, eps=1e-5):
    return imp.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)


def _f_layer_norm(imp, node, x, normalized_shape, weight=None, bias=None, eps=1e-5):
    return imp.layer_norm(x, normalized_shape, weight, bias, eps)


def _f_max_pool2d(imp, node, x, kernel_size, stride=None, padding=0, dilation=1,
                  ceil_mode=False, return_indices=False):
    if return_indices:
        imp.fail("return_indices=True")
    return imp.pool("max", x, kernel_size, stride, padding, dilation, ceil_mode)


def _f_avg_pool2d(imp, node, x, kernel_size, stride=None, padding=0, ceil_mode=False,
                  count_include_pad=True, divisor_override=None):
    return imp.pool("avg", x, kernel_size, stride, padding, 1, ceil_mode, count_include_pad,
                    divisor_override)


def _f_adaptive_avg(imp, node, x, output_size):
    return imp.adaptive_avg_pool(x, output_size)


def _f_leaky_relu(imp, node, x, negative_slope=0.01, inplace=False):
    return imp.unary(x, _leaky_relu(negative_slope)(imp.fn.f32), "lrelu")


def _f_gelu(imp, node, x, approximate="none"):
    return imp.unary(x, _gelu(approximate)(imp.fn.f32), "gelu")


def _f_hardtanh(imp, node, x, min_val=-1.0, max_val=1.0, inplace=False):
    c = imp.fn.f32
    return imp.unary(x, [f"%t1 = arith.maximumf %x, {c(min_val)} : f32",
                         f"%y = arith.minimumf %t1, {c(max_val)} : f32"], "hardtanh")


def _f_dropout(imp, node, x, p=0.5, training=True, inplace=False):
    if not training:
        return x
    return imp.dropout(x, p)


def _f_softmax(log):
    def handler(imp, node, x, dim=None, _stacklevel=3, dtype=None):
        if dtype is not None:
            imp.fail("softmax with a dtype")
        if dim is None:
            imp.fail("softmax without dim")
        return imp.softmax(x, dim, log)
    return handler


def _f_embedding(imp, node, ids, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False):
    if scale_grad_by_freq:
        imp.fail("scale_grad_by_freq=True")
    return imp.embedding(ids, weight, padding_idx, max_norm)


def _flatten_fn(imp, node, x, start_dim=0, end_dim=-1):
    x = imp.as_tensor(x)
    s, e = start_dim % x.rank, end_dim % x.rank
    n = 1
    for d in x.shape[s:e + 1]:
        n *= d
    return imp.reshape(x, list(x.shape[:s]) + [n] + list(x.shape[e + 1:]))


def _cat(imp, node, tensors, dim=0):
    xs = [imp.as_tensor(t) for t in tensors]
    if len(xs) == 1:
        return xs[0]
    return imp.fn.concat(xs, dim % xs[0].rank, imp.loc())


def _binary(op, swap=False):
    def handler(imp, node, a, b, alpha=1, **kwargs):
        if kwargs:
            imp.fail(f"arguments {sorted(kwargs)}")
        if swap:
            a, b = b, a
        return imp.binary(op, a, b, alpha)
    return handler


def _neg(imp, node, x):
    return imp.unary(x, ["%y = arith.negf %x : f32"], "neg")


def _transpose(imp, node, x, a, b):
    x = imp.as_tensor(x)
    perm = list(range(x.rank))
    a, b = a % x.rank, b % x.rank
    perm[a], perm[b] = perm[b], perm[a]
    return imp.permute(x, perm)


def _permute(imp, node, x, *dims):
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    return imp.permute(x, list(dims))


def _matmul(imp, node, a, b):
    return imp.matmul(a, b)


def _bmm(imp, node, a, b):
    a, b = imp.as_tensor(a), imp.as_tensor(b)
    if a.rank != 3 or b.rank != 3:
        imp.fail(f"bmm of {a.type} and {b.type}")
    return imp.matmul(a, b)


def _mean(imp, node, x, dim=None, keepdim=False, dtype=None):
    x = imp.as_tensor(x)
    if dtype is not None:
        imp.fail("mean with a dtype")
    return imp.mean(x, list(range(x.rank)) if dim is None else dim, keepdim)


def _size(imp, node, x, dim=None):
    x = imp.as_tensor(x)
    return torch.Size(x.shape) if dim is None else x.shape[dim]


def _getattr(imp, node, x, name):
    if isinstance(x, Tensor) and name == "shape":
        return torch.Size(x.shape)
    imp.fail(f"the attribute '{name}'")


def _getitem(imp, node, x, index):
    return imp.getitem(x, index)


def _reshape(imp, node, x, *shape):
    return imp.reshape(x, shape)


def _identity_fn(imp, node, x, *args, **kwargs):
    return x


def _int_op(fn):
    def handler(imp, node, a, b):
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            imp.fail("on a tensor")
        return fn(a, b)
    return handler


FUNCTIONS = {
    F.conv2d: _f_conv2d,
    F.linear: _f_linear,
    F.batch_norm: _f_batch_norm,
    F.layer_norm: _f_layer_norm,
    F.max_pool2d: _f_max_pool2d,
    torch.max_pool2d: _f_max_pool2d,
    F.avg_pool2d: _f_avg_pool2d,
    F.adaptive_avg_pool2d: _f_adaptive_avg,
    F.relu: _activation(_relu, "relu"),
    torch.relu: _activation(_relu, "relu"),
    F.relu6: _activation(_relu6, "relu6"),
    F.leaky_relu: _f_leaky_relu,
    F.gelu: _f_gelu,
    F.silu: _activation(_silu, "silu"),
    F.hardswish: _activation(_hardswish, "hardswish"),
    F.hardsigmoid: _activation(_hardsigmoid, "hardsigmoid"),
    F.hardtanh: _f_hardtanh,
    torch.sigmoid: _activation(_sigmoid, "sigmoid"),
    F.sigmoid: _activation(_sigmoid, "sigmoid"),
    torch.tanh: _activation(_tanh, "tanh"),
    F.tanh: _activation(_tanh, "tanh"),
    F.dropout: _f_dropout,
    F.softmax: _f_softmax(False),
    torch.softmax: _f_softmax(False),
    F.log_softmax: _f_softmax(True),
    torch.log_softmax: _f_softmax(True),
    F.embedding: _f_embedding,
    torch.flatten: _flatten_fn,
    torch.cat: _cat,
    torch.concat: _cat,
    torch.add: _binary("addf"),
    torch.sub: _binary("subf"),
    torch.mul: _binary("mulf"),
    torch.div: _binary("divf"),
    operator.add: _binary("addf"),
    operator.iadd: _binary("addf"),
    operator.sub: _binary("subf"),
    operator.isub: _binary("subf"),
    operator.mul: _binary("mulf"),
    operator.imul: _binary("mulf"),
    operator.truediv: _binary("divf"),
    operator.itruediv: _binary("divf"),
    operator.neg: _neg,
    torch.neg: _neg,
    torch.transpose: _transpose,
    torch.permute: _permute,
    torch.matmul: _matmul,
    operator.matmul: _matmul,
    torch.bmm: _bmm,
    torch.mean: _mean,
    torch.reshape: _reshape,
    operator.getitem: _getitem,
    getattr: _getattr,
    operator.floordiv: _int_op(operator.floordiv),
}

def _expand(imp, node, x, *sizes):
    return imp.expand(x, sizes)


def _expand_as(imp, node, x, other):
    return imp.expand(x, imp.as_tensor(other).shape)


METHODS = {
    "expand": _expand,
    "expand_as": _expand_as,
    "view": _reshape,
    "reshape": _reshape,
    "flatten": _flatten_fn,
    "permute": _permute,
    "transpose": _transpose,
    "contiguous": _identity_fn,
    "size": _size,
    "relu": _activation(_relu, "relu"),
    "sigmoid": _activation(_sigmoid, "sigmoid"),
    "tanh": _activation(_tanh, "tanh"),
    "softmax": _f_softmax(False),
    "log_softmax": _f_softmax(True),
    "matmul": _matmul,
    "bmm": _bmm,
    "mean": _mean,
    "add": _binary("addf"),
    "sub": _binary("subf"),
    "mul": _binary("mulf"),
    "div": _binary("divf"),
    "add_": _binary("addf"),
    "mul_": _binary("mulf"),
    "neg": _neg,
}
