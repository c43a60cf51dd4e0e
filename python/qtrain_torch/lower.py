"""torch.fx graph -> qtrain's forward-graph contract in upstream MLIR.

`Importer(module, example_input).run()` traces `module` with torch.fx,
propagates shapes with the example input, and writes `@forward`:
parameters first as `{qtrain.param}` arguments carrying their current
values (`qtrain.init = dense_resource<...>`), then the input batch; batch
norm running statistics as `arith.constant`s (qtrain-train-batchnorm makes
them state); logits as the one result. Every op is linalg, tensor, arith or
math on static tensors, each located at the model's source line and named
by its module path. Anything the importer does not know is an
`UnsupportedError` naming the module path, the op and the source line.
"""
import copy
import math
import operator
import os
import re

import numpy as np
import torch
import torch.fx as fx
import torch.nn as nn

from .mlir import Function, Tensor, resource_hex, tensor_type


class UnsupportedError(Exception):
    """A model the importer cannot write as a forward graph."""


_TORCH_DIR = os.path.dirname(torch.__file__)
_OWN_DIR = os.path.dirname(os.path.abspath(__file__))


class _ShapedProxy(fx.Proxy):
    """A proxy whose shape is known: `x.shape`, `x.size()`, `x.dim()` and
    `x.ndim` give the concrete values of the traced input's shape, so that
    code like `b, s, d = x.shape` traces (the graph is static anyway)."""

    def _concrete(self):
        value = self.tracer.values.get(self.node)
        return value if isinstance(value, torch.Tensor) else None

    def __getattr__(self, k):
        value = self._concrete() if k in ("shape", "size", "dim", "ndim") else None
        if value is not None:
            if k == "shape":
                return value.shape
            if k == "ndim":
                return value.dim()
            return getattr(value, k)
        return super().__getattr__(k)


class _Tracer(fx.Tracer):
    """fx's tracer, recording the module path each node was created in and
    running each node on the example input as it goes (on a copy of the
    model), so that shapes are concrete while tracing."""

    def __init__(self, root, example):
        super().__init__()
        self.record_stack_traces = True
        self.path = []
        self.values = {}
        self.failure = None
        self.example = example
        self.copy = copy.deepcopy(root)
        self.copy_modules = dict(self.copy.named_modules())

    def call_module(self, m, forward, args, kwargs):
        self.path.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.path.pop()

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        node.meta["qtrain_path"] = self.path[-1] if self.path else ""
        return node

    def proxy(self, node):
        try:
            with torch.no_grad():
                self.values[node] = self._run(node)
        except Exception as e:  # the first failure is the model's error
            self.values[node] = None
            if self.failure is None:
                self.failure = (node, e)
        return _ShapedProxy(node, self)

    def _value(self, n):
        # fx makes some nodes without a proxy (get_attr of a buffer or a
        # tensor constant, through create_arg): run them on first use.
        if n not in self.values:
            self.values[n] = self._run(n)
        return self.values[n]

    def _run(self, node):
        get = self._value
        args = fx.node.map_arg(node.args, get)
        kwargs = fx.node.map_arg(node.kwargs, get)
        if node.op == "placeholder":
            return self.example
        if node.op == "get_attr":
            obj = self.copy
            for part in node.target.split("."):
                obj = getattr(obj, part)
            return obj
        if node.op == "call_module":
            # forward, not __call__: fx patches Module.__call__ while tracing.
            return self.copy_modules[node.target].forward(*args, **kwargs)
        if node.op == "call_function":
            return node.target(*args, **kwargs)
        if node.op == "call_method":
            return getattr(args[0], node.target)(*args[1:], **kwargs)
        return None


def _source_line(node):
    """(file, line) of the model's code that made `node`: the innermost frame
    of its stack trace outside torch itself."""
    trace = node.stack_trace or ""
    for line in trace.split("\n"):
        line = line.strip()
        if not line.startswith("File "):
            continue
        try:
            path = line.split('"')[1]
            number = int(line.split(", line ")[1].split(",")[0])
        except (IndexError, ValueError):
            continue
        if path.startswith(_TORCH_DIR) or path.startswith(_OWN_DIR):
            continue
        return (path, number)  # innermost first
    return None


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _op_name(node):
    t = node.target
    if node.op == "call_function":
        return getattr(t, "__module__", "") + "." + getattr(t, "__name__", str(t)) \
            if getattr(t, "__module__", None) else getattr(t, "__name__", str(t))
    if node.op == "call_method":
        return "Tensor." + t
    return str(t)


class Importer:
    def __init__(self, module, example_input, function="forward", dropout="train"):
        if not isinstance(module, nn.Module):
            raise UnsupportedError(f"expected a torch.nn.Module, got {type(module).__name__}")
        self.module = module
        self.example = example_input
        self.function = function
        self.fn = Function()
        self.env = {}
        # id(parameter) -> (name, parameter); the arguments made so far.
        self.param_names = {}
        for name, p in module.named_parameters():
            self.param_names.setdefault(id(p), (name, p))
        self.param_order = {name: i for i, (name, _) in enumerate(module.named_parameters())}
        self.args = {}  # name -> dict(tensor=Tensor, torch_shape, array)
        self.resources = {}
        self.node = None
        self.input_dtype = "f32"
        self.dropout_mode = dropout
        self.notes = []
        # The running statistics of each batch norm, in graph order (the
        # order of their state in the bundle).
        self.batchnorms = []
        # (fx node name, p) of each dropout site, in graph order (its Philox
        # stream is 0x44500000 + index: qtrain-insert-dropout).
        self.dropout_sites = []

    # Diagnostics and locations.

    def where(self, node=None):
        node = node or self.node
        path = node.meta.get("qtrain_path", "") if node is not None else ""
        src = _source_line(node) if node is not None else None
        parts = []
        if path:
            parts.append(f"module '{path}'")
        if src:
            parts.append(f"{src[0]}:{src[1]}")
        return ", ".join(parts)

    def fail(self, message, node=None):
        node = node or self.node
        where = self.where(node)
        op = _op_name(node) if node is not None else ""
        raise UnsupportedError(f"{where + ': ' if where else ''}{op}: {message}")

    def loc(self):
        node = self.node
        path = node.meta.get("qtrain_path", "")
        src = _source_line(node)
        name = (f"{path}:{node.name}" if path and path != node.name else node.name).replace('"', "'")
        if src:
            return f'"{name}"("{src[0]}":{src[1]}:0)'
        return f'"{name}"'

    # Values.

    def param(self, p, shape=None):
        """The argument of parameter `p`, in `shape` (a reshape of its own,
        the layout the op takes; the initial value is reshaped to it)."""
        if id(p) not in self.param_names:
            return None
        name, _ = self.param_names[id(p)]
        shape = tuple(shape or p.shape)
        if name in self.args:
            arg = self.args[name]
            if arg["tensor"].shape != shape:
                self.fail(f"parameter '{name}' is used as {tensor_type(shape)} and as "
                          f"{arg['tensor'].type}; the importer gives a parameter one layout")
            return arg["tensor"]
        if not p.requires_grad:
            return None
        t = Tensor(f"%p{len(self.args)}", shape)
        array = p.detach().cpu().to(torch.float32).numpy().reshape(shape)
        self.args[name] = {"tensor": t, "torch_shape": tuple(p.shape), "array": array,
                           "name": name}
        return t

    def constant(self, value, name):
        """A float tensor constant with these values (a dense_resource)."""
        array = value.detach().cpu().to(torch.float32).numpy()
        key = f"qtrain_{name}".replace(".", "_")
        while key in self.resources:
            key += "_"
        self.resources[key] = array
        t = Tensor(self.fn.fresh("c"), array.shape)
        self.fn.emit(f"{t.name} = arith.constant dense_resource<{key}> : {t.type}", self.loc())
        return t

    def weight(self, p, shape=None, what="weight"):
        """A parameter (an argument) or, frozen, a constant."""
        if p is None:
            return None
        if not isinstance(p, torch.Tensor):
            self.fail(f"{what} is not a tensor")
        t = self.param(p, shape)
        if t is not None:
            return t
        name = self.param_names.get(id(p), (what,))[0]
        c = self.constant(p.reshape(shape) if shape else p, name)
        return c

    def value(self, a):
        """The importer's value of fx argument `a`."""
        if isinstance(a, fx.Node):
            if a not in self.env:
                self.fail(f"uses '{a.name}', which was not imported")
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self.value(x) for x in a)
        return a

    # The driver.

    def trace(self):
        # Traced in training mode: code that reads self.training (dropout,
        # functional batch norm) is traced as it trains.
        was_training = self.module.training
        self.module.train()
        tracer = _Tracer(self.module, self.example)
        try:
            graph = tracer.trace(self.module)
        except Exception as e:  # fx raises TraceError, TypeError, ...
            raise UnsupportedError(f"torch.fx cannot trace the model: {e}") from None
        finally:
            self.module.train(was_training)
        if tracer.failure is not None:
            node, e = tracer.failure
            where = self.where(node)
            message = str(e).strip().split("\n")[0]
            raise UnsupportedError(f"{where + ': ' if where else ''}the model does not run on "
                                   f"an input of shape {tuple(self.example.shape)}: {message}")
        self.values = tracer.values
        return fx.GraphModule(tracer.root, graph)

    def run(self):
        gm = self.trace()
        self.gm = gm
        modules = dict(gm.named_modules())
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != 1:
            raise UnsupportedError(f"the model's forward takes {len(placeholders)} inputs; "
                                   "qtrain trains models of one input batch")
        result = None
        for node in gm.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                x = self.example
                if x.dtype == torch.float32:
                    dtype = "f32"
                elif x.dtype == torch.int64:
                    dtype = "i64"
                else:
                    self.fail(f"the input is {x.dtype}; expected float32 features or int64 token ids")
                self.input_dtype = dtype
                self.env[node] = Tensor("%x", tuple(x.shape), dtype)
            elif node.op == "get_attr":
                obj = gm
                for part in node.target.split("."):
                    obj = getattr(obj, part)
                self.env[node] = obj
            elif node.op in ("call_module", "call_function", "call_method"):
                if node.op == "call_module":
                    self.env[node] = self.call_module(node, modules[node.target])
                else:
                    table = _FUNCTIONS if node.op == "call_function" else _METHODS
                    self.env[node] = self.call(node, table, node.target, "is not supported")
                self.check_shape(node)
            elif node.op == "output":
                result = self.value(node.args[0])
        if not isinstance(result, Tensor) or result.rank != 2 or result.dtype != "f32":
            shape = result.shape if isinstance(result, Tensor) else type(result).__name__
            raise UnsupportedError(f"the model returns {shape}; qtrain trains models whose "
                                   "forward returns one batch x classes tensor of logits")
        self.result = result
        return self.text()

    def check_shape(self, node):
        """The imported value has the shape PyTorch computed for the node."""
        ours, theirs = self.env[node], self.values.get(node)
        if isinstance(ours, Tensor) and isinstance(theirs, torch.Tensor):
            if ours.shape != tuple(theirs.shape):
                self.fail(f"internal error: imported as {ours.type} but PyTorch computes "
                          f"{tuple(theirs.shape)}")

    def text(self):
        ordered = sorted(self.args.values(), key=lambda a: self.param_order[a["name"]])
        # The bundle's names (file names: letters, digits, '_', '.', '-').
        taken = set()
        for a in ordered:
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", a["name"])
            name = "_" + name if name.startswith(".") else name
            base, k = name, 1
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            taken.add(name)
            a["bundle_name"] = name
        # Arguments are numbered in use order; rename to PyTorch's order.
        header = []
        for a in ordered:
            key = "qtrain_param_" + a["name"].replace(".", "_")
            self.resources[key] = a["array"]
            header.append(f"    {a['tensor'].name}: {a['tensor'].type} {{qtrain.param, "
                          f"qtrain.name = \"{a['bundle_name']}\", "
                          f"qtrain.init = dense_resource<{key}> : {a['tensor'].type}}},")
        self.params = ordered
        x = self.env[next(n for n in self.gm.graph.nodes if n.op == "placeholder")]
        out = []
        out.append(f"// Imported by qtrain-import-torch from {type(self.module).__name__}: "
                   f"{len(ordered)} parameters, input {x.type}.")
        out.append(f"func.func @{self.function}(")
        out += header
        out.append(f"    %x: {x.type}) -> {self.result.type} {{")
        out += self.fn.scalar_lines
        out += self.fn.lines
        out.append(f"  return {self.result.name} : {self.result.type}")
        out.append("}")
        if self.resources:
            out.append("")
            out.append("{-#")
            out.append("  dialect_resources: {")
            out.append("    builtin: {")
            items = list(self.resources.items())
            for i, (k, arr) in enumerate(items):
                sep = "," if i + 1 < len(items) else ""
                out.append(f'      {k}: "{resource_hex(np.ascontiguousarray(arr))}"{sep}')
            out.append("    }")
            out.append("  }")
            out.append("#-}")
        return "\n".join(out) + "\n"

    # Dispatch.

    def call(self, node, table, key, what, *lead):
        """Runs the handler of `key` in `table` on the node's arguments as
        importer values; `lead` goes before them (the module)."""
        handler = table.get(key)
        if handler is None:
            self.fail(what)
        args = [self.value(a) for a in node.args]
        kwargs = {k: self.value(v) for k, v in node.kwargs.items()}
        return handler(self, *lead, node, *args, **kwargs)

    def call_module(self, node, m):
        what = (f"module {type(m).__module__}.{type(m).__name__} is not supported "
                f"(supported modules: {', '.join(sorted(c.__name__ for c in _MODULES))})")
        return self.call(node, _MODULES, type(m), what, m)

    # Layers.

    def conv2d(self, x, w, b, stride, padding, dilation, groups):
        x = self.as_tensor(x)
        if x.rank != 4:
            self.fail(f"expected an N x C x H x W input, got {x.type}")
        f, cg, kh, kw = (int(d) for d in w.shape)
        n, c, h, wd = x.shape
        stride, dilation = _pair(stride), _pair(dilation)
        if isinstance(padding, str):
            if padding == "valid":
                pads = [(0, 0), (0, 0)]
            elif padding == "same":
                if stride != (1, 1):
                    self.fail("padding='same' with a stride")
                pads = []
                for k, d in zip((kh, kw), dilation):
                    total = d * (k - 1)
                    pads.append((total // 2, total - total // 2))
            else:
                self.fail(f"padding '{padding}'")
        else:
            p = _pair(padding)
            pads = [(p[0], p[0]), (p[1], p[1])]
        loc = self.loc()
        x = self.fn.pad(x, [0, 0, pads[0][0], pads[1][0]], [0, 0, pads[0][1], pads[1][1]], 0.0, loc)
        ho = (x.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
        wo = (x.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
        if ho < 1 or wo < 1:
            self.fail(f"the kernel does not fit the {h}x{wd} input")
        out = [n, f, ho, wo]
        attrs = (f" {{dilations = dense<[{dilation[0]}, {dilation[1]}]> : vector<2xi64>, "
                 f"strides = dense<[{stride[0]}, {stride[1]}]> : vector<2xi64>}}")
        depthwise = groups == c and f == c and cg == 1 and groups > 1
        if groups == 1:
            wt = self.weight(w)
            init = self.bias_init(b, out, 1)
            return self.fn.named("conv_2d_nchw_fchw", [x, wt], init, attrs, loc, "conv")
        if depthwise:
            wt = self.weight(w, (c, kh, kw))
            init = self.bias_init(b, out, 1)
            return self.fn.named("depthwise_conv_2d_nchw_chw", [x, wt], init, attrs, loc, "conv")
        g = groups
        wt = self.weight(w, (g, f // g, cg, kh, kw))
        xg = self.fn.expand(x, [[0], [1, 2], [3], [4]], [n, g, c // g, x.shape[2], x.shape[3]], loc)
        init = self.bias_init(b, out, 1)
        init = self.fn.expand(init, [[0], [1, 2], [3], [4]], [n, g, f // g, ho, wo], loc)
        y = self.fn.named("conv_2d_ngchw_gfchw", [xg, wt], init, attrs, loc, "conv")
        return self.fn.collapse(y, [[0], [1, 2], [3], [4]], loc)

    def bias_init(self, b, shape, dim):
        """The init of a layer's output: its bias broadcast along `dim`, or
        zeros (torch-mlir's form)."""
        if b is None:
            return self.fn.fill(shape, 0.0, self.loc())
        bt = self.weight(b, what="bias")
        rank = len(shape)
        return self.fn.generic([bt], [[f"d{dim}"]], shape, [f"d{i}" for i in range(rank)],
                               ["parallel"] * rank, lambda a, o: [f"linalg.yield {a[0]} : f32"],
                               self.loc(), "bias")

    def linear(self, x, w, b):
        x = self.as_tensor(x)
        out_f, in_f = (int(d) for d in w.shape)
        if x.shape[-1] != in_f:
            self.fail(f"input {x.type} does not end in the weight's {in_f} features")
        loc = self.loc()
        lead = list(x.shape[:-1])
        x2 = x if x.rank == 2 else self.fn.collapse(x, [list(range(x.rank - 1)), [x.rank - 1]], loc)
        if x.rank == 1:
            self.fail("a linear layer on a 1-d input")
        wt = self.fn.transpose(self.weight(w), [1, 0], loc)
        m = x2.shape[0]
        init = self.bias_init(b, [m, out_f], 1)
        y = self.fn.named("matmul", [x2, wt], init, "", loc, "mm")
        if x.rank == 2:
            return y
        return self.fn.expand(y, [list(range(x.rank - 1)), [x.rank - 1]], lead + [out_f], loc)

    def batch_norm(self, x, mean, var, w, b, training, momentum, eps, what="batch norm"):
        x = self.as_tensor(x)
        if x.rank not in (2, 4):
            self.fail(f"{what} of a {x.type}: expected N x C or N x C x H x W")
        if mean is None or var is None:
            self.fail(f"{what} without running statistics (track_running_stats=False): "
                      "qtrain's batch norm keeps them as state")
        if not training:
            self.fail(f"{what} with training=False (statistics frozen while training) is "
                      "not supported: qtrain trains batch norm with batch statistics")
        if momentum is None or abs(momentum - 0.1) > 1e-12:
            self.fail(f"{what} with momentum {momentum}: qtrain-train-batchnorm updates "
                      "running statistics with PyTorch's default 0.1")
        names = {id(b): n for n, b in self.module.named_buffers()}
        self.batchnorms.append((names.get(id(mean)), names.get(id(var))))
        m = self.constant(mean, "running_mean")
        v = self.constant(var, "running_var")
        ins, maps = [x, m, v], [None, ["d1"], ["d1"]]
        g = self.weight(w, what="weight") if w is not None else None
        bb = self.weight(b, what="bias") if b is not None else None
        if g is not None:
            ins.append(g)
            maps.append(["d1"])
        if bb is not None:
            ins.append(bb)
            maps.append(["d1"])
        rank = x.rank
        maps[0] = [f"d{i}" for i in range(rank)]
        eps_c = self.fn.f32(eps)

        def body(a, o):
            return [f"%ve = arith.addf {a[2]}, {eps_c} : f32",
                    "%r = math.rsqrt %ve : f32",
                    f"%d = arith.subf {a[0]}, {a[1]} : f32",
                    "%n = arith.mulf %d, %r : f32"] + _affine("%n", a[3:], g, bb)

        return self.fn.generic(ins, maps, list(x.shape), [f"d{i}" for i in range(rank)],
                               ["parallel"] * rank, body, self.loc(), "bn")

    def layer_norm(self, x, normalized_shape, w, b, eps):
        x = self.as_tensor(x)
        ns = tuple(normalized_shape) if not isinstance(normalized_shape, int) else (normalized_shape,)
        k = len(ns)
        if tuple(x.shape[-k:]) != ns:
            self.fail(f"normalized_shape {ns} is not the end of the input's {x.type}")
        loc = self.loc()
        dims = list(range(x.rank - k, x.rank))
        count = 1
        for d in ns:
            count *= d
        mean = self.scale(self.fn.reduce(x, dims, "addf", 0.0, loc, "sum"), 1.0 / count)
        lead = x.rank - k
        xc = self.fn.generic([x, mean], [[f"d{i}" for i in range(x.rank)], [f"d{i}" for i in range(lead)]],
                             list(x.shape), [f"d{i}" for i in range(x.rank)], ["parallel"] * x.rank,
                             lambda a, o: [f"%d = arith.subf {a[0]}, {a[1]} : f32", "linalg.yield %d : f32"],
                             loc, "xc")
        init = self.fn.fill(x.shape[:lead], 0.0, loc)
        sq = self.fn.generic([xc], [[f"d{i}" for i in range(x.rank)]], None, [f"d{i}" for i in range(lead)],
                             ["parallel"] * lead + ["reduction"] * k,
                             lambda a, o: [f"%m = arith.mulf {a[0]}, {a[0]} : f32",
                                           f"%s = arith.addf {o}, %m : f32", "linalg.yield %s : f32"],
                             loc, "sq", init=init)
        inv, eps_c = self.fn.f32(1.0 / count), self.fn.f32(eps)
        rstd = self.fn.map([sq], sq.shape, lambda a, o: [
            f"%v = arith.mulf {a[0]}, {inv} : f32", f"%ve = arith.addf %v, {eps_c} : f32",
            "%r = math.rsqrt %ve : f32", "linalg.yield %r : f32"], loc, "rstd")
        ins = [xc, rstd]
        maps = [[f"d{i}" for i in range(x.rank)], [f"d{i}" for i in range(lead)]]
        g = self.weight(w, what="weight") if w is not None else None
        bb = self.weight(b, what="bias") if b is not None else None
        for t in (g, bb):
            if t is not None:
                ins.append(t)
                maps.append([f"d{i}" for i in range(lead, x.rank)])

        def body(a, o):
            return [f"%n = arith.mulf {a[0]}, {a[1]} : f32"] + _affine("%n", a[2:], g, bb)

        return self.fn.generic(ins, maps, list(x.shape), [f"d{i}" for i in range(x.rank)],
                               ["parallel"] * x.rank, body, loc, "ln")

    def dropout(self, x, p):
        """Train-time dropout: an elementwise copy marked {qtrain.dropout =
        p}, which qtrain-compile's qtrain-insert-dropout turns into a
        Philox-masked qtrain.dropout (evaluation skips it). With
        dropout="off" (--dropout=off) it is left out, with a note."""
        if p == 0:
            return x
        if not 0 <= p < 1:
            self.fail(f"dropout probability {p}: expected [0, 1)")
        if self.dropout_mode == "off":
            self.notes.append(f"{self.where() or self.node.name}: dropout (p={p}) is left out "
                              "(--dropout=off): the imported model trains without it")
            return x
        x = self.as_tensor(x)
        full = [f"d{i}" for i in range(x.rank)]
        self.dropout_sites.append((self.node.name, p))
        return self.fn.generic([x], [full], list(x.shape), full, ["parallel"] * x.rank,
                               lambda a, o: [f"linalg.yield {a[0]} : {x.dtype}"], self.loc(),
                               "drop", attrs=f", qtrain.dropout = {float(p):.17e} : f64")

    def scale(self, x, factor):
        c = self.fn.f32(factor)
        return self.fn.map([x], x.shape, lambda a, o: [f"%m = arith.mulf {a[0]}, {c} : f32",
                                                       "linalg.yield %m : f32"], self.loc(), "scale")

    def pool(self, kind, x, kernel, stride, padding, dilation=1, ceil_mode=False,
             count_include_pad=True, divisor_override=None):
        x = self.as_tensor(x)
        if x.rank != 4:
            self.fail(f"expected an N x C x H x W input, got {x.type}")
        k = _pair(kernel)
        s = _pair(stride if stride not in (None, []) else kernel)
        p = _pair(padding)
        d = _pair(dilation)
        n, c, h, w = x.shape
        sizes = []
        for i, size in enumerate((h, w)):
            span = size + 2 * p[i] - d[i] * (k[i] - 1) - 1
            floor = span // s[i] + 1
            if ceil_mode:
                ceil = -(-span // s[i]) + 1
                if (ceil - 1) * s[i] >= size + p[i]:
                    ceil -= 1
                if ceil != floor:
                    self.fail("ceil_mode=True where it adds a window (only sizes where it "
                              "changes nothing are supported)")
            sizes.append(floor)
        loc = self.loc()
        value = -math.inf if kind == "max" else 0.0
        xp = self.fn.pad(x, [0, 0, p[0], p[1]], [0, 0, p[0], p[1]], value, loc)
        out = [n, c, sizes[0], sizes[1]]
        init = self.fn.fill(out, value, loc)
        win = self.fn.empty([k[0], k[1]], loc=loc)
        attrs = (f" {{dilations = dense<[{d[0]}, {d[1]}]> : vector<2xi64>, "
                 f"strides = dense<[{s[0]}, {s[1]}]> : vector<2xi64>}}")
        if kind == "max":
            return self.fn.named("pooling_nchw_max", [xp, win], init, attrs, loc, "pool")
        total = self.fn.named("pooling_nchw_sum", [xp, win], init, attrs, loc, "pool")
        if divisor_override:
            return self.scale(total, 1.0 / divisor_override)
        if count_include_pad or not any(p):
            return self.scale(total, 1.0 / (k[0] * k[1]))
        # Windows count only the input's elements.
        counts = np.zeros(sizes, dtype=np.float32)
        for i in range(sizes[0]):
            rows = max(0, min(i * s[0] - p[0] + k[0], h) - max(i * s[0] - p[0], 0))
            for j in range(sizes[1]):
                cols = max(0, min(j * s[1] - p[1] + k[1], w) - max(j * s[1] - p[1], 0))
                counts[i, j] = 1.0 / (rows * cols)
        cnt = self.constant(torch.from_numpy(counts), "avgpool_counts")
        return self.fn.generic([total, cnt], [["d0", "d1", "d2", "d3"], ["d2", "d3"]], out,
                               ["d0", "d1", "d2", "d3"], ["parallel"] * 4,
                               lambda a, o: [f"%m = arith.mulf {a[0]}, {a[1]} : f32",
                                             "linalg.yield %m : f32"], loc, "avg")

    def adaptive_avg_pool(self, x, output_size):
        x = self.as_tensor(x)
        if x.rank != 4:
            self.fail(f"expected an N x C x H x W input, got {x.type}")
        o = _pair(output_size)
        o = tuple(x.shape[2 + i] if o[i] is None else o[i] for i in range(2))
        h, w = x.shape[2:]
        if h % o[0] or w % o[1]:
            self.fail(f"adaptive pooling of {h}x{w} to {o[0]}x{o[1]}: only output sizes "
                      "that divide the input are supported")
        if o == (1, 1):
            loc = self.loc()
            s = self.scale(self.fn.reduce(x, [2, 3], "addf", 0.0, loc, "sum"), 1.0 / (h * w))
            return self.fn.expand(s, [[0], [1, 2, 3]], [x.shape[0], x.shape[1], 1, 1], loc)
        k = (h // o[0], w // o[1])
        return self.pool("avg", x, k, k, 0)

    # Elementwise.

    def as_tensor(self, v):
        if isinstance(v, torch.Tensor):
            return self.weight(v)
        if not isinstance(v, Tensor):
            self.fail(f"expected a tensor, got {type(v).__name__}")
        return v

    def unary(self, x, lines, prefix="act"):
        """An elementwise op on x whose body is `lines` on %x, yielding %y."""
        x = self.as_tensor(x)
        if x.dtype != "f32":
            self.fail(f"on a {x.type}")

        def body(a, o):
            return [l.replace("%x", a[0]) for l in lines] + ["linalg.yield %y : f32"]
        return self.fn.map([x], x.shape, body, self.loc(), prefix)

    def binary(self, op, a, b, alpha=1):
        """a op b with broadcasting; either may be a Python number."""
        if isinstance(a, torch.Tensor):
            a = self.weight(a)
        if isinstance(b, torch.Tensor):
            b = self.weight(b)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            return {"addf": operator.add, "subf": operator.sub, "mulf": operator.mul,
                    "divf": operator.truediv}[op](a, b * alpha)
        for v in (a, b):
            if not isinstance(v, (Tensor, int, float)) or isinstance(v, bool):
                self.fail(f"an operand of type {type(v).__name__}")
            if isinstance(v, Tensor) and v.dtype != "f32":
                self.fail(f"on a {v.type}")
        tensors = [v for v in (a, b) if isinstance(v, Tensor)]
        shape = tuple(torch.broadcast_shapes(*[torch.Size(t.shape) for t in tensors]))
        al = self.fn.f32(alpha) if alpha != 1 else None

        def body(args, o):
            it = iter(args)
            names = [next(it) if isinstance(v, Tensor) else self.fn.f32(v) for v in (a, b)]
            lines = []
            rhs = names[1]
            if al:
                lines.append(f"%s = arith.mulf {rhs}, {al} : f32")
                rhs = "%s"
            lines.append(f"%y = arith.{op} {names[0]}, {rhs} : f32")
            return lines + ["linalg.yield %y : f32"]
        return self.fn.map(tensors, shape, body, self.loc(), op[:3])

    # Shapes.

    def reshape(self, x, shape):
        x = self.as_tensor(x)
        shape = list(shape)
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = list(shape[0])
        if shape.count(-1) > 1:
            self.fail("a shape with more than one -1")
        known = 1
        for d in shape:
            if d != -1:
                known *= d
        if -1 in shape:
            shape[shape.index(-1)] = x.numel() // max(known, 1)
        total = 1
        for d in shape:
            total *= d
        if total != x.numel():
            self.fail(f"cannot reshape {x.type} to {shape}")
        if tuple(shape) == x.shape:
            return x
        loc = self.loc()
        groups = _collapse_groups(x.shape, shape)
        if groups is not None:
            return self.fn.collapse(x, groups, loc)
        groups = _collapse_groups(shape, x.shape)
        if groups is not None:
            return self.fn.expand(x, groups, shape, loc)
        # Through the common refinement: collapse then expand group-wise.
        flat = self.fn.collapse(x, [list(range(x.rank))], loc)
        return self.fn.expand(flat, [list(range(len(shape)))], shape, loc)

    def expand(self, x, sizes):
        x = self.as_tensor(x)
        if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
            sizes = sizes[0]
        sizes = list(sizes)
        lead = len(sizes) - x.rank
        if lead < 0:
            self.fail(f"expand of {x.type} to {len(sizes)} dimensions")
        shape = [x.shape[i - lead] if (d == -1 and i >= lead) else d for i, d in enumerate(sizes)]
        for i in range(x.rank):
            if x.shape[i] != 1 and x.shape[i] != shape[lead + i]:
                self.fail(f"expand of {x.type} to {shape}")
        if tuple(shape) == x.shape:
            return x
        return self.fn.map([x], shape, lambda a, o: [f"linalg.yield {a[0]} : f32"],
                           self.loc(), "bcast")

    def permute(self, x, perm):
        x = self.as_tensor(x)
        perm = [p % x.rank for p in perm]
        if perm == list(range(x.rank)):
            return x
        return self.fn.transpose(x, perm, self.loc())

    def softmax(self, x, dim, log=False):
        x = self.as_tensor(x)
        dim = dim % x.rank
        loc = self.loc()
        keep = [f"d{i}" for i in range(x.rank) if i != dim]
        full = [f"d{i}" for i in range(x.rank)]
        m = self.fn.reduce(x, [dim], "maximumf", -math.inf, loc, "max")
        e = self.fn.generic([x, m], [full, keep], list(x.shape), full, ["parallel"] * x.rank,
                            lambda a, o: [f"%d = arith.subf {a[0]}, {a[1]} : f32",
                                          "%y = math.exp %d : f32", "linalg.yield %y : f32"],
                            loc, "exp")
        s = self.fn.reduce(e, [dim], "addf", 0.0, loc, "sum")
        if log:
            return self.fn.generic([x, m, s], [full, keep, keep], list(x.shape), full,
                                   ["parallel"] * x.rank,
                                   lambda a, o: [f"%d = arith.subf {a[0]}, {a[1]} : f32",
                                                 f"%l = math.log {a[2]} : f32",
                                                 "%y = arith.subf %d, %l : f32",
                                                 "linalg.yield %y : f32"], loc, "lsm")
        return self.fn.generic([e, s], [full, keep], list(x.shape), full, ["parallel"] * x.rank,
                               lambda a, o: [f"%y = arith.divf {a[0]}, {a[1]} : f32",
                                             "linalg.yield %y : f32"], loc, "sm")

    def matmul(self, a, b):
        a, b = self.as_tensor(a), self.as_tensor(b)
        loc = self.loc()
        if a.rank == 2 and b.rank == 2:
            init = self.fn.fill([a.shape[0], b.shape[1]], 0.0, loc)
            return self.fn.named("matmul", [a, b], init, "", loc, "mm")
        if a.rank >= 3 and b.rank == 2:
            lead = list(a.shape[:-1])
            a2 = self.fn.collapse(a, [list(range(a.rank - 1)), [a.rank - 1]], loc)
            y = self.matmul(a2, b)
            return self.fn.expand(y, [list(range(a.rank - 1)), [a.rank - 1]], lead + [b.shape[1]], loc)
        if a.rank == b.rank and a.rank >= 3 and a.shape[:-2] == b.shape[:-2]:
            r = a.rank
            batch = list(a.shape[:-2])
            g = [list(range(r - 2)), [r - 2], [r - 1]]
            a3 = a if r == 3 else self.fn.collapse(a, g, loc)
            b3 = b if r == 3 else self.fn.collapse(b, g, loc)
            init = self.fn.fill([a3.shape[0], a3.shape[1], b3.shape[2]], 0.0, loc)
            y = self.fn.named("batch_matmul", [a3, b3], init, "", loc, "bmm")
            if r == 3:
                return y
            return self.fn.expand(y, g, batch + [a.shape[-2], b.shape[-1]], loc)
        self.fail(f"matmul of {a.type} and {b.type} (supported: 2-d x 2-d, N-d x 2-d, "
                  "and batched with equal batch dimensions)")

    def embedding(self, ids, table, padding_idx=None, max_norm=None):
        ids = self.as_tensor(ids)
        if max_norm is not None:
            self.fail("an embedding with max_norm (it renormalizes the table in place)")
        if ids.dtype != "i64":
            self.fail(f"embedding indices must be the int64 input, got {ids.type}")
        t = self.weight(table, what="table")
        rows, d = t.shape
        out = list(ids.shape) + [d]
        r = ids.rank
        tname, ttype = t.name, t.type
        return self.fn.generic([ids], [[f"d{i}" for i in range(r)]], out,
                               [f"d{i}" for i in range(r + 1)], ["parallel"] * (r + 1),
                               lambda a, o: [f"%i = arith.index_cast {a[0]} : i64 to index",
                                             f"%j = linalg.index {r} : index",
                                             f"%y = tensor.extract {tname}[%i, %j] : {ttype}",
                                             "linalg.yield %y : f32"], self.loc(), "emb")

    def mean(self, x, dims, keepdim=False):
        x = self.as_tensor(x)
        if isinstance(dims, int):
            dims = [dims]
        dims = sorted(d % x.rank for d in dims)
        count = 1
        for d in dims:
            count *= x.shape[d]
        loc = self.loc()
        y = self.scale(self.fn.reduce(x, dims, "addf", 0.0, loc, "sum"), 1.0 / count)
        if keepdim:
            shape = [1 if i in dims else x.shape[i] for i in range(x.rank)]
            return self.reshape(y, shape)
        return y

    def getitem(self, x, index):
        if not isinstance(x, Tensor):
            return operator.getitem(x, index)
        if not isinstance(index, tuple):
            index = (index,)
        offsets, sizes, strides, drop = [], [], [], []
        dim = 0
        for i in index:
            if i is Ellipsis:
                rest = x.rank - dim - (len(index) - index.index(Ellipsis) - 1)
                for _ in range(rest):
                    offsets.append(0), sizes.append(x.shape[dim]), strides.append(1)
                    dim += 1
                continue
            if dim >= x.rank:
                self.fail(f"too many indices for {x.type}")
            size = x.shape[dim]
            if isinstance(i, int):
                i = i % size
                offsets.append(i), sizes.append(1), strides.append(1)
                drop.append(dim)
            elif isinstance(i, slice):
                start, stop, step = i.indices(size)
                if step < 1:
                    self.fail("a negative slice step")
                count = max(0, (stop - start + step - 1) // step)
                offsets.append(start), sizes.append(count), strides.append(step)
            else:
                self.fail(f"indexing with {type(i).__name__} (only integers and slices)")
            dim += 1
        while dim < x.rank:
            offsets.append(0), sizes.append(x.shape[dim]), strides.append(1)
            dim += 1
        loc = self.loc()
        y = x
        if sizes != list(x.shape):
            y = self.fn.extract_slice(x, offsets, sizes, strides, loc)
        if drop:
            shape = [s for k, s in enumerate(sizes) if k not in drop]
            y = self.reshape(y, shape)
        return y


def _affine(normalized, args, weight, bias):
    """The end of a norm's body: `normalized` times the weight and plus the
    bias, each present or None, read from the block arguments `args` in
    that order; then the yield."""
    lines, last, k = [], normalized, 0
    if weight is not None:
        lines.append(f"%s = arith.mulf {last}, {args[k]} : f32")
        last, k = "%s", k + 1
    if bias is not None:
        lines.append(f"%t = arith.addf {last}, {args[k]} : f32")
        last = "%t"
    return lines + [f"linalg.yield {last} : f32"]


def _collapse_groups(src, dst):
    """Groups of `src`'s dimensions whose products are `dst`, or None."""
    groups, i = [], 0
    for d in dst:
        if i >= len(src):
            return None
        g, n = [i], src[i]
        i += 1
        while n < d and i < len(src):
            n *= src[i]
            g.append(i)
            i += 1
        if n != d:
            return None
        groups.append(g)
    while i < len(src) and src[i] == 1 and groups:
        groups[-1].append(i)
        i += 1
    return groups if i == len(src) else None


from . import ops  # noqa: E402  (fills the tables below)

_MODULES = ops.MODULES
_FUNCTIONS = ops.FUNCTIONS
_METHODS = ops.METHODS
