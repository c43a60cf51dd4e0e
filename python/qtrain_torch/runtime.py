"""The parts of qtrain's C API (runtime/include/qtrain/runtime/qtrain.h)
that the checker uses, through ctypes on libqtrain.so."""
import ctypes
import os
import shutil

import numpy as np


class _BundleInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("batch", ctypes.c_int64),
                ("classes", ctypes.c_int64), ("input_numel", ctypes.c_int64),
                ("labels_numel", ctypes.c_int64), ("num_parameters", ctypes.c_int64),
                ("num_state", ctypes.c_int64), ("num_sites", ctypes.c_int64),
                ("schedule", ctypes.c_char_p), ("grad_schedule", ctypes.c_char_p)]


class _Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("schedule", ctypes.c_char_p),
                ("grad_schedule", ctypes.c_char_p), ("total_steps", ctypes.c_int64),
                ("seed", ctypes.c_uint64), ("learning_rate", ctypes.c_float),
                ("momentum", ctypes.c_float), ("weight_decay", ctypes.c_float),
                ("threads", ctypes.c_int32)]


class _Tensor(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("rank", ctypes.c_int64), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("numel", ctypes.c_int64), ("data", ctypes.POINTER(ctypes.c_float))]


class QtrainError(Exception):
    pass


def tool_dir():
    """The directory of qtrain's tools: $QTRAIN_BIN, else where
    qtrain-compile is on PATH, else the build next to this package."""
    if os.environ.get("QTRAIN_BIN"):
        return os.environ["QTRAIN_BIN"]
    found = shutil.which("qtrain-compile")
    if found:
        return os.path.dirname(os.path.realpath(found))
    here = os.path.dirname(os.path.abspath(__file__))
    for build in (os.path.join(here, "..", "..", "build", "bin"),):
        if os.path.exists(os.path.join(build, "qtrain-compile")):
            return os.path.normpath(build)
    raise QtrainError("cannot find qtrain-compile: put qtrain's bin/ on PATH or set QTRAIN_BIN")


def load_library():
    path = os.environ.get("QTRAIN_LIBRARY") or os.path.join(tool_dir(), "..", "lib", "libqtrain.so")
    if not os.path.exists(path):
        raise QtrainError(f"cannot find libqtrain.so at {path} (set QTRAIN_LIBRARY)")
    lib = ctypes.CDLL(path)
    lib.qtrain_last_error.restype = ctypes.c_char_p
    lib.qtrain_bundle_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.qtrain_bundle_close.argtypes = [ctypes.c_void_p]
    lib.qtrain_bundle_get_info.argtypes = [ctypes.c_void_p, ctypes.POINTER(_BundleInfo)]
    lib.qtrain_trainer_options_init.argtypes = [ctypes.POINTER(_Options)]
    lib.qtrain_trainer_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Options),
                                          ctypes.POINTER(ctypes.c_void_p)]
    lib.qtrain_trainer_destroy.argtypes = [ctypes.c_void_p]
    for name in ("qtrain_trainer_step", "qtrain_trainer_step_ids"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                       ctypes.POINTER(ctypes.c_float)]
    for name in ("qtrain_trainer_eval", "qtrain_trainer_eval_ids"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32,
                                       ctypes.c_void_p]
    for name in ("qtrain_trainer_get_parameter", "qtrain_trainer_get_momentum",
                 "qtrain_trainer_get_state"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(_Tensor)]
    return lib


class Trainer:
    """One bundle and one trainer over it."""

    def __init__(self, bundle_dir, momentum=0.0, weight_decay=0.0, lr=0.01, seed=0,
                 total_steps=1, schedule=None):
        self.lib = load_library()
        self.bundle = ctypes.c_void_p()
        self._ok(self.lib.qtrain_bundle_open(bundle_dir.encode(), ctypes.byref(self.bundle)))
        self.info = _BundleInfo()
        self.info.struct_size = ctypes.sizeof(_BundleInfo)
        self._ok(self.lib.qtrain_bundle_get_info(self.bundle, ctypes.byref(self.info)))
        opts = _Options()
        opts.struct_size = ctypes.sizeof(_Options)
        self.lib.qtrain_trainer_options_init(ctypes.byref(opts))
        opts.total_steps = total_steps
        opts.seed = seed
        opts.learning_rate = lr
        opts.momentum = momentum
        opts.weight_decay = weight_decay
        if schedule:
            opts.schedule = schedule.encode()
        self.trainer = ctypes.c_void_p()
        self._ok(self.lib.qtrain_trainer_create(self.bundle, ctypes.byref(opts),
                                                ctypes.byref(self.trainer)))

    def _ok(self, status):
        if status != 0:
            raise QtrainError(self.lib.qtrain_last_error().decode())

    def close(self):
        self.lib.qtrain_trainer_destroy(self.trainer)
        self.lib.qtrain_bundle_close(self.bundle)

    def step(self, x, labels):
        loss = ctypes.c_float()
        x = np.ascontiguousarray(x)
        labels = np.ascontiguousarray(labels, dtype=np.int64)
        fn = self.lib.qtrain_trainer_step_ids if x.dtype == np.int64 else self.lib.qtrain_trainer_step
        self._ok(fn(self.trainer, x.ctypes.data, labels.ctypes.data, ctypes.byref(loss)))
        return loss.value

    def eval(self, x, bits=0):
        x = np.ascontiguousarray(x)
        out = np.zeros((self.info.batch, self.info.classes), dtype=np.float32)
        fn = self.lib.qtrain_trainer_eval_ids if x.dtype == np.int64 else self.lib.qtrain_trainer_eval
        self._ok(fn(self.trainer, x.ctypes.data, bits, out.ctypes.data))
        return out

    def _view(self, fn, index):
        t = _Tensor()
        t.struct_size = ctypes.sizeof(_Tensor)
        self._ok(fn(self.trainer, index, ctypes.byref(t)))
        shape = [t.shape[i] for i in range(t.rank)]
        data = np.ctypeslib.as_array(t.data, shape=(t.numel,)).copy() if t.numel else \
            np.zeros(0, np.float32)
        return t.name.decode(), data.reshape(shape)

    def parameter(self, index):
        return self._view(self.lib.qtrain_trainer_get_parameter, index)

    def momentum(self, index):
        return self._view(self.lib.qtrain_trainer_get_momentum, index)

    def state(self, index):
        return self._view(self.lib.qtrain_trainer_get_state, index)
