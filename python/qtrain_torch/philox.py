"""qtrain's Philox noise (docs/numerics.md section 2) in numpy, for replaying
the masks of qtrain.dropout in PyTorch (check.py)."""
import numpy as np

_M0, _M1 = 0xD2511F53, 0xCD9E8D57
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK = 0xFFFFFFFF

DROPOUT_STREAM_BASE = 0x44500000


def philox4x32(counter, key):
    """Philox4x32-10 of counter (four uint32 arrays) and key (two ints)."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in counter)
    k0, k1 = np.uint64(key[0] & _MASK), np.uint64(key[1] & _MASK)
    m = np.uint64(_MASK)
    for r in range(10):
        if r:
            k0 = np.uint64((int(k0) + _W0) & _MASK)
            k1 = np.uint64((int(k1) + _W1) & _MASK)
        p0 = np.uint64(_M0) * c0
        p1 = np.uint64(_M1) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & m,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & m)
    return c0, c1, c2, c3


def noise(seed, stream, step, count):
    """The noise u - 0.5 in [-0.5, 0.5) of elements 0..count-1 (float32)."""
    i = np.arange(count, dtype=np.uint64)
    block = i >> np.uint64(2)
    words = philox4x32((block & np.uint64(_MASK), block >> np.uint64(32),
                        np.full(count, stream & _MASK, np.uint64),
                        np.full(count, step & _MASK, np.uint64)),
                       (seed & _MASK, (seed >> 32) & _MASK))
    lane = (i & np.uint64(3)).astype(np.int64)
    word = np.choose(lane, words).astype(np.uint64)
    top = (word >> np.uint64(8)).astype(np.float32)
    return top * np.float32(2.0 ** -24) - np.float32(0.5)


def dropout_keep(seed, site, step, shape, p):
    """Which elements qtrain.dropout of site `site` keeps at `step`."""
    count = int(np.prod(shape))
    u = noise(seed, DROPOUT_STREAM_BASE + site, step, count) + np.float32(0.5)
    return (u >= np.float32(p)).reshape(shape)
