"""Writing MLIR text: a function body of upstream ops (linalg, tensor,
arith, math) on static tensors, and the dense_resource blobs that carry
initial values.

The importer (lower.py) asks for ops; this module knows their syntax. Every
value is a `Tensor` (an SSA name, a static shape and an element type).
"""
import struct


class Tensor:
    """An SSA value of type tensor<shape x dtype>."""

    def __init__(self, name, shape, dtype="f32"):
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)

    @property
    def rank(self):
        return len(self.shape)

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


def tensor_type(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def f32_literal(value):
    """An exact f32 literal (hex), as MLIR prints non-round values."""
    bits = struct.unpack("<I", struct.pack("<f", float(value)))[0]
    return f"0x{bits:08X}"


def affine_map(rank, results):
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({', '.join(results)})>"


def identity_map(rank):
    return affine_map(rank, [f"d{i}" for i in range(rank)])


class Function:
    """The body of one func.func being written."""

    def __init__(self):
        self.lines = []
        self.count = 0
        self.scalars = {}
        self.scalar_lines = []

    def fresh(self, prefix="v"):
        self.count += 1
        return f"%{prefix}{self.count}"

    def emit(self, line, loc=None):
        if loc:
            line += f" loc({loc})"
        self.lines.append("  " + line)

    def f32(self, value):
        """An f32 scalar constant, defined once at the top of the body."""
        key = ("f32", f32_literal(value))
        if key not in self.scalars:
            name = f"%cst{len(self.scalars)}"
            self.scalars[key] = name
            self.scalar_lines.append(
                f"  {name} = arith.constant {f32_literal(value)} : f32")
        return self.scalars[key]

    def index(self, value):
        key = ("index", int(value))
        if key not in self.scalars:
            name = f"%idx{len(self.scalars)}"
            self.scalars[key] = name
            self.scalar_lines.append(f"  {name} = arith.constant {int(value)} : index")
        return self.scalars[key]

    # Ops on tensors. Each returns the result Tensor.

    def empty(self, shape, dtype="f32", loc=None):
        t = Tensor(self.fresh("e"), shape, dtype)
        self.emit(f"{t.name} = tensor.empty() : {t.type}", loc)
        return t

    def fill(self, shape, value, loc=None):
        e = self.empty(shape, loc=loc)
        t = Tensor(self.fresh("fill"), shape)
        self.emit(f"{t.name} = linalg.fill ins({self.f32(value)} : f32) "
                  f"outs({e.name} : {e.type}) -> {t.type}", loc)
        return t

    def generic(self, inputs, maps, out, out_map, iterators, body, loc=None,
                prefix="g", init=None, attrs=""):
        """linalg.generic over `inputs` (Tensors, read through `maps`) into a
        new tensor of `out` (shape) read through `out_map`, or into `init`.
        `body(args, out_arg)` gets the block argument names and returns the
        body's lines, the last of which yields."""
        rank = len(iterators)
        if init is None:
            init = self.empty(out, loc=loc)
        t = Tensor(self.fresh(prefix), init.shape, init.dtype)
        all_maps = ", ".join([affine_map(rank, m) for m in maps] +
                             [affine_map(rank, out_map)])
        its = ", ".join(f'"{i}"' for i in iterators)
        ins = ""
        if inputs:
            ins = (f" ins({', '.join(i.name for i in inputs)} : "
                   f"{', '.join(i.type for i in inputs)})")
        self.emit(f"{t.name} = linalg.generic {{indexing_maps = [{all_maps}], "
                  f"iterator_types = [{its}]{attrs}}}{ins} outs({init.name} : {init.type}) {{")
        args = [f"%a{i}" for i in range(len(inputs))]
        sig = ", ".join([f"{a}: {i.dtype}" for a, i in zip(args, inputs)] +
                        [f"%out: {init.dtype}"])
        self.lines.append(f"  ^bb0({sig}):")
        for line in body(args, "%out"):
            self.lines.append("    " + line)
        self.lines.append(f"  }} -> {t.type}" + (f" loc({loc})" if loc else ""))
        return t

    def map(self, inputs, shape, body, loc=None, prefix="ew"):
        """An elementwise generic with numpy broadcasting of `inputs` to
        `shape` (a size-1 dimension is read at index 0, as torch-mlir)."""
        rank = len(shape)
        maps = []
        for x in inputs:
            lead = rank - x.rank
            maps.append(["0" if x.shape[i] == 1 and shape[lead + i] != 1
                         else f"d{lead + i}" for i in range(x.rank)])
        out_map = [f"d{i}" for i in range(rank)]
        return self.generic(inputs, maps, shape, out_map, ["parallel"] * rank,
                            body, loc=loc, prefix=prefix)

    def reduce(self, x, dims, combine, start, loc=None, prefix="red"):
        """Reduces `x` over `dims` (kept as... dropped) with `combine`
        ("addf", "maximumf"), starting from `start`."""
        dims = sorted(d % x.rank for d in dims)
        keep = [i for i in range(x.rank) if i not in dims]
        shape = [x.shape[i] for i in keep]
        init = self.fill(shape, start, loc=loc)
        its = ["reduction" if i in dims else "parallel" for i in range(x.rank)]
        return self.generic(
            [x], [[f"d{i}" for i in range(x.rank)]], None, [f"d{i}" for i in keep],
            its, lambda a, o: [f"%r = arith.{combine} {o}, {a[0]} : f32",
                               "linalg.yield %r : f32"],
            loc=loc, prefix=prefix, init=init)

    def transpose(self, x, perm, loc=None):
        shape = [x.shape[p] for p in perm]
        e = self.empty(shape, x.dtype, loc=loc)
        t = Tensor(self.fresh("tr"), shape, x.dtype)
        self.emit(f"{t.name} = linalg.transpose ins({x.name} : {x.type}) "
                  f"outs({e.name} : {e.type}) permutation = "
                  f"[{', '.join(str(p) for p in perm)}]", loc)
        return t

    def collapse(self, x, groups, loc=None):
        shape = []
        for g in groups:
            n = 1
            for i in g:
                n *= x.shape[i]
            shape.append(n)
        t = Tensor(self.fresh("col"), shape, x.dtype)
        self.emit(f"{t.name} = tensor.collapse_shape {x.name} {groups_str(groups)} "
                  f": {x.type} into {t.type}", loc)
        return t

    def expand(self, x, groups, shape, loc=None):
        t = Tensor(self.fresh("exp"), shape, x.dtype)
        self.emit(f"{t.name} = tensor.expand_shape {x.name} {groups_str(groups)} "
                  f"output_shape [{', '.join(str(d) for d in shape)}] "
                  f": {x.type} into {t.type}", loc)
        return t

    def pad(self, x, low, high, value, loc=None):
        if not any(low) and not any(high):
            return x
        shape = [d + a + b for d, a, b in zip(x.shape, low, high)]
        t = Tensor(self.fresh("pad"), shape, x.dtype)
        idx = ", ".join(f"%i{i}: index" for i in range(x.rank))
        self.emit(f"{t.name} = tensor.pad {x.name} low[{', '.join(map(str, low))}] "
                  f"high[{', '.join(map(str, high))}] {{")
        self.lines.append(f"  ^bb0({idx}):")
        self.lines.append(f"    tensor.yield {self.f32(value)} : f32")
        self.lines.append(f"  }} : {x.type} to {t.type}" + (f" loc({loc})" if loc else ""))
        return t

    def named(self, op, ins, init, attrs="", loc=None, prefix="op"):
        t = Tensor(self.fresh(prefix), init.shape, init.dtype)
        self.emit(f"{t.name} = linalg.{op}{attrs} ins({', '.join(i.name for i in ins)} : "
                  f"{', '.join(i.type for i in ins)}) outs({init.name} : {init.type}) "
                  f"-> {t.type}", loc)
        return t

    def extract_slice(self, x, offsets, sizes, strides, loc=None):
        t = Tensor(self.fresh("sl"), sizes, x.dtype)
        j = lambda v: ", ".join(str(i) for i in v)
        self.emit(f"{t.name} = tensor.extract_slice {x.name}[{j(offsets)}] [{j(sizes)}] "
                  f"[{j(strides)}] : {x.type} to {t.type}", loc)
        return t

    def concat(self, xs, dim, loc=None):
        shape = list(xs[0].shape)
        shape[dim] = sum(x.shape[dim] for x in xs)
        t = Tensor(self.fresh("cat"), shape, xs[0].dtype)
        self.emit(f"{t.name} = tensor.concat dim({dim}) "
                  f"{', '.join(x.name for x in xs)} : ({', '.join(x.type for x in xs)}) "
                  f"-> {t.type}", loc)
        return t


def groups_str(groups):
    return "[" + ", ".join("[" + ", ".join(str(i) for i in g) + "]" for g in groups) + "]"


def resource_hex(array):
    """The dialect_resources string of a float32/int64 numpy array: a 4-byte
    alignment header (the element size), then the raw little-endian data."""
    data = array.tobytes()
    return "0x" + struct.pack("<I", array.dtype.itemsize).hex().upper() + data.hex().upper()
