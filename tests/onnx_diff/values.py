"""Random tensors: shapes (rank 0 to 8, broadcasting, zero sizes, shapes
past the planners' thresholds) and element values (edge values of every
data type: NaN, infinities, signed zeros, subnormals, values near
overflow, integer extremes)."""

import numpy as np

NUMPY = {
    "float64": np.float64,
    "float32": np.float32,
    "float16": np.float16,
    "int64": np.int64,
    "int32": np.int32,
    "int16": np.int16,
    "int8": np.int8,
    "uint64": np.uint64,
    "uint32": np.uint32,
    "uint16": np.uint16,
    "uint8": np.uint8,
    "bool": np.bool_,
}

FLOATS = ("float64", "float32", "float16")
SIGNED = ("int64", "int32", "int16", "int8")
UNSIGNED = ("uint64", "uint32", "uint16", "uint8")
INTS = SIGNED + UNSIGNED

# The most elements one drawn tensor has: a few MB in a case file.
MAX_ELEMENTS = 1 << 17
# Sizes of a long dimension: past the reduce planners' tree, lanes and
# chunk thresholds (`ops-core/src/patterns/reduce.rs`, `fold.rs`: 64
# elements a tree row, 1024 a fold chunk, 32 vectors a lanes row) and past
# one workgroup's elements (256 threads x 4) of the map patterns.
LONG_SIZES = (63, 64, 65, 129, 255, 256, 257, 513, 1023, 1024, 1025, 2049, 4097, 16385, 65537)


def size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Draw:
    """A seeded source of shapes and values (numpy's PCG64)."""

    def __init__(self, seed):
        self.g = np.random.default_rng(seed)
        # One case is big (a long dimension) or has edge values, or both.
        self.big = self.chance(0.08)
        self.special = self.chance(0.45)

    # Plain choices.
    def chance(self, p):
        return bool(self.g.random() < p)

    def int(self, lo, hi):
        """An integer in [lo, hi]."""
        return int(self.g.integers(lo, hi + 1))

    def pick(self, items):
        items = list(items)
        return items[int(self.g.integers(0, len(items)))]

    def subset(self, items, k):
        items = list(items)
        idx = self.g.permutation(len(items))[:k]
        return [items[i] for i in sorted(idx)]

    def float_attr(self, lo, hi):
        """A float attribute, exactly representable as a float32."""
        return float(np.float32(self.pick([lo, hi, 0.0, 1.0, self.g.uniform(lo, hi)])))

    # Shapes.
    def rank(self, lo, hi):
        lo, hi = max(lo, 0), min(hi, 8)
        # Ranks 0 to 4 are drawn more often than 5 to 8.
        if hi > 4 and self.chance(0.3):
            return self.int(max(lo, 5), hi)
        return self.int(lo, min(hi, 4)) if lo <= 4 else self.int(lo, hi)

    def dim(self, zero=True):
        if zero and self.chance(0.02):
            return 0
        return self.pick([1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8])

    def shape(self, rank, zero=True, min_dim=0):
        """A shape of `rank` dimensions; a big case has one long dimension."""
        shape = [max(self.dim(zero), min_dim) for _ in range(rank)]
        if self.big and rank > 0:
            axis = self.int(0, rank - 1)
            rest = max(size(shape[:axis] + shape[axis + 1 :]), 1)
            fits = [n for n in LONG_SIZES if n * rest <= MAX_ELEMENTS]
            if fits:
                shape[axis] = self.pick(fits)
        while size(shape) > MAX_ELEMENTS:
            shape[shape.index(max(shape))] //= 2
        return shape

    def fit(self, shape, times):
        """`shape` with its largest dimensions halved until `times` copies
        of it hold at most MAX_ELEMENTS elements."""
        shape = list(shape)
        while shape and size(shape) * max(times, 1) > MAX_ELEMENTS and max(shape) > 1:
            shape[shape.index(max(shape))] //= 2
        return shape

    def broadcast_from(self, out):
        """An input shape that broadcasts to `out`: trailing dimensions,
        some set to 1."""
        k = len(out) if self.chance(0.6) else self.int(0, len(out))
        tail = out[len(out) - k :]
        return [1 if d != 0 and self.chance(0.25) else d for d in tail]

    # Values.
    def values(self, dtype, shape, lo=None, hi=None, special=None):
        """A tensor of `dtype`: plain values, with edge values when the case
        draws them; integers in [lo, hi] when bounds are given."""
        n = size(shape)
        special = self.special if special is None else special
        if dtype == "bool":
            x = self.g.random(n) < self.g.random()
        elif dtype in FLOATS:
            x = self._floats(dtype, n, special, lo, np.inf if hi is None else hi)
        else:
            x = self._ints(dtype, n, special, lo, hi)
        return np.asarray(x, dtype=NUMPY[dtype]).reshape(shape)

    def _floats(self, dtype, n, special, lo, hi):
        t = NUMPY[dtype]
        info = np.finfo(t)
        mode = self.int(0, 3)
        if mode == 0:  # small integers: ties, exact results
            x = self.g.integers(-8, 9, n).astype(np.float64)
        elif mode == 1:
            x = self.g.uniform(-1, 1, n)
        elif mode == 2:
            x = self.g.standard_normal(n) * 10.0 ** self.g.uniform(-3, 3)
        else:  # magnitudes over the whole range of the type
            e = self.g.uniform(np.log2(float(info.tiny)), np.log2(float(info.max)) - 1, n)
            x = np.exp2(e) * self.g.choice([-1.0, 1.0], n)
        if lo is not None:
            x = np.clip(x, lo, hi)
        with np.errstate(over="ignore"):
            x = x.astype(t)
        if special and n:
            edges = np.array(
                [
                    np.nan,
                    np.inf,
                    -np.inf,
                    0.0,
                    -0.0,
                    float(info.smallest_subnormal),
                    -float(info.smallest_subnormal),
                    float(info.tiny) / 2,
                    float(info.tiny),
                    float(info.max),
                    -float(info.max),
                    float(info.max) * 0.75,
                    1.0,
                    -1.0,
                    0.5,
                    -2.5,
                ]
            ).astype(t)
            if lo is not None:
                edges = edges[(edges >= lo) & (edges <= hi)]
            if len(edges):
                mask = self.g.random(n) < self.g.uniform(0.05, 0.5)
                x[mask] = self.g.choice(edges, int(mask.sum()))
        return x

    def _ints(self, dtype, n, special, lo, hi):
        t = NUMPY[dtype]
        info = np.iinfo(t)
        dlo, dhi = int(info.min), int(info.max)
        if hi is None:
            hi = dhi
        if lo is None:
            mode = self.int(0, 2) if special else 0
            if mode == 0:
                lo, hi = max(dlo, -10), min(dhi, 10)
            elif mode == 1:
                lo, hi = dlo, dhi
            else:
                lo, hi = max(dlo, -(1 << 20)), min(dhi, 1 << 20)
        lo, hi = max(lo, dlo), min(hi, dhi)
        x = self.g.integers(lo, hi, n, dtype=t, endpoint=True)
        if special and n and lo == dlo:
            edges = np.array([dlo, dhi, 0, 1, dhi - 1, dlo + 1], dtype=object)
            mask = self.g.random(n) < 0.2
            x[mask] = np.array(self.g.choice(edges, int(mask.sum())), dtype=t)
        return x

    def indices(self, dtype, shape, bound, negative=True):
        """Valid indices into a dimension of size `bound`, negative ones
        counting from the end when allowed."""
        x = self.g.integers(0, bound, size(shape))
        if negative:
            flip = self.g.random(size(shape)) < 0.3
            x[flip] -= bound
        return x.astype(NUMPY[dtype]).reshape(shape)


def encode(a):
    """A tensor's elements as case-file JSON values."""
    a = np.asarray(a)
    dt = str(a.dtype)
    if dt == "bool":
        return [bool(x) for x in a.reshape(-1)]
    if dt in FLOATS:
        out = a.astype(np.float64).reshape(-1).tolist()
        if not np.isfinite(a).all():
            out = [
                "NaN" if x != x else "Infinity" if x == float("inf") else "-Infinity" if x == float("-inf") else x
                for x in out
            ]
        return out
    return [int(x) for x in a.reshape(-1)]
