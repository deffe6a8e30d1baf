"""One random single-node ONNX model per call, for each operator of the
catalog's `onnx` namespace: every attribute, data type of the operator's
support table, rank, broadcast shape and negative axis is drawn.

Draws stay inside what ONNX defines: where ONNX leaves a result undefined
(integer division by zero, a float cast to an integer type out of its
range, shifts by the bit width or more, duplicate scatter indices without
a reduction) no such value is drawn."""

from dataclasses import dataclass, field

import numpy as np

from .values import FLOATS, INTS, MAX_ELEMENTS, NUMPY, SIGNED, size

# The opset of every model (ONNX Runtime 1.20 knows up to 21); the
# deprecated Scatter exists up to opset 10 only.
OPSET = 21


@dataclass
class Node:
    """One ONNX node with its inputs: `inputs` holds `(name, array)` pairs,
    `(\"\", None)` for an absent optional input."""

    op: str
    inputs: list
    outputs: list
    attrs: dict = field(default_factory=dict)
    opset: int = OPSET

    def input(self, i):
        return self.inputs[i][1] if i < len(self.inputs) else None

    def dtypes(self):
        return tuple(str(a.dtype) if a is not None else "" for _, a in self.inputs)


def _in(name, array):
    return (name, np.asarray(array))


def _absent():
    return ("", None)


def _i64(values):
    return np.array(values, dtype=np.int64)


def _unary(op, x="x", out="y", lo=None, hi=None):
    def draw(d, s):
        dt = d.pick(s.dtypes(x))
        shape = d.shape(d.rank(*s.ranks(x)))
        return Node(op, [_in("X", d.values(dt, shape, lo, hi))], ["Y"])

    return draw


def _binary(op, a="a", nonzero_b=False):
    def draw(d, s):
        dt = d.pick(s.dtypes(a))
        out = d.shape(d.rank(*s.ranks(a)))
        sa = d.broadcast_from(out) if d.chance(0.5) else out
        sb = d.broadcast_from(out) if d.chance(0.5) else out
        va, vb = d.values(dt, sa), d.values(dt, sb)
        if nonzero_b and dt in INTS:
            vb = _nonzero_divisor(vb, dt)
        return Node(op, [_in("A", va), _in("B", vb)], ["C"])

    return draw


def _nonzero_divisor(b, dt):
    """Integer divisors without 0 or -1 (MIN / -1 overflows: undefined)."""
    b = b.copy()
    b[b == 0] = 3
    if dt in SIGNED:
        b[b == -1] = -2
    return b


# The most tensors a variadic list draws (ONNX's have no bound): past the
# widest instances (seven inputs, six Split outputs), so that `ops run`
# chains them (`ops/src/variadic.rs`).
VARIADIC = 12


def _variadic(op, limit):
    def draw(d, s):
        dt = d.pick(s.dtypes("data"))
        out = d.shape(d.rank(*s.ranks("data")))
        n = d.int(1, limit)
        xs = [d.values(dt, d.broadcast_from(out) if d.chance(0.5) else out) for _ in range(n)]
        return Node(op, [_in(f"data_{i}", x) for i, x in enumerate(xs)], ["out"])

    return draw


def _argminmax(op):
    def draw(d, s):
        dt = d.pick(s.dtypes("data"))
        r = d.rank(*s.ranks("data"))
        axis = d.int(-r, r - 1)
        shape = d.shape(r)
        if shape[axis] == 0:
            shape[axis] = 1
        attrs = {"axis": axis, "keepdims": d.int(0, 1), "select_last_index": d.int(0, 1)}
        return Node(op, [_in("data", d.values(dt, shape))], ["reduced"], attrs)

    return draw


def _axes_input(d, r):
    """Distinct axes in [-r, r-1], each possibly negative."""
    k = d.int(1, r)
    return [a - r if d.chance(0.3) else a for a in d.subset(range(r), k)]


def _reduce(op, positive=False):
    def draw(d, s):
        dt = d.pick(s.dtypes("data"))
        r = d.rank(*s.ranks("data"))
        # ReduceMean of an empty set is undefined in ONNX.
        shape = d.shape(r, zero=op != "ReduceMean")
        data = d.values(dt, shape, 0 if positive and d.chance(0.7) else None, None)
        attrs = {"keepdims": d.int(0, 1)}
        mode = d.int(0, 3)
        if r == 0 or mode == 0:
            axes = _absent()
        elif mode == 1:
            axes = _in("axes", _i64([]))
            attrs["noop_with_empty_axes"] = d.int(0, 1)
        else:
            axes = _in("axes", _i64(_axes_input(d, r)))
        if d.chance(0.15):
            attrs["noop_with_empty_axes"] = d.int(0, 1)
        return Node(op, [_in("data", data), axes], ["reduced"], attrs)

    return draw


def _positive_values(d, dt, shape):
    if dt in FLOATS:
        return d.values(dt, shape, 0.0, 1e30)
    return d.values(dt, shape, 0, None)


def gather(d, s):
    dt = d.pick(s.dtypes("data"))
    it = d.pick(s.dtypes("indices"))
    r = d.rank(1, 8)
    axis = d.int(-r, r - 1)
    shape = d.shape(r)
    shape[axis] = max(shape[axis], 1)
    q = d.rank(0, 8 - (r - 1))
    ind = d.indices(it, d.fit(d.shape(q), size(shape) // shape[axis]), shape[axis])
    return Node("Gather", [_in("data", d.values(dt, shape)), _in("indices", ind)], ["output"], {"axis": axis})


def gather_elements(d, s):
    dt = d.pick(s.dtypes("data"))
    it = d.pick(s.dtypes("indices"))
    r = d.rank(1, 8)
    axis = d.int(-r, r - 1)
    shape = d.shape(r)
    shape[axis] = max(shape[axis], 1)
    ishape = [d.int(0 if n == 0 else 1, n) if n else 0 for n in shape]
    ishape[axis] = d.int(1, 6)
    ind = d.indices(it, ishape, shape[axis])
    return Node(
        "GatherElements",
        [_in("data", d.values(dt, shape)), _in("indices", ind)],
        ["output"],
        {"axis": axis},
    )


def gather_nd(d, s):
    dt = d.pick(s.dtypes("data"))
    r = d.rank(1, 8)
    b = d.int(0, r - 1) if d.chance(0.4) else 0
    shape = d.shape(r, zero=False)
    k = d.int(1, r - b)
    q = d.int(b + 1, max(b + 1, 8 - (r - b - k) + 1))
    q = min(q, 8)
    middle = d.fit(d.shape(q - b - 1, zero=False), size(shape[:b]) * size(shape[b + k :]))
    ishape = shape[:b] + middle + [k]
    n = size(ishape[:-1])
    cols = [d.indices("int64", [n], shape[b + j]) for j in range(k)]
    ind = np.stack(cols, axis=-1).reshape(ishape) if n else np.zeros(ishape, np.int64)
    return Node(
        "GatherND",
        [_in("data", d.values(dt, shape)), _in("indices", ind)],
        ["output"],
        {"batch_dims": b},
    )


def _scatter_elements(op, reductions):
    def draw(d, s):
        reduction = d.pick(reductions)
        dt = d.pick(s.dtypes("data", reduction))
        it = d.pick(s.dtypes("indices", reduction))
        r = d.rank(1, 8)
        axis = d.int(-r, r - 1)
        shape = d.shape(r, zero=False)
        ishape = [d.int(1, n) for n in shape]
        a = axis % r
        # Distinct indices along `axis` for every other position, as ONNX
        # requires without a reduction; repeated ones with a reduction.
        outer = size(ishape[:a])
        inner = size(ishape[a + 1 :])
        ind = np.empty((outer, ishape[a], inner), np.int64)
        for o in range(outer):
            for i in range(inner):
                if reduction == "none":
                    ind[o, :, i] = d.g.permutation(shape[a])[: ishape[a]]
                else:
                    ind[o, :, i] = d.g.integers(0, shape[a], ishape[a])
        flip = d.g.random(ind.shape) < 0.3
        ind[flip] -= shape[a]
        ind = ind.reshape(ishape).astype(NUMPY[it])
        attrs = {"axis": axis}
        if op == "ScatterElements":
            attrs["reduction"] = reduction
        node = Node(
            op,
            [
                _in("data", d.values(dt, shape)),
                _in("indices", ind),
                _in("updates", d.values(dt, ishape)),
            ],
            ["output"],
            attrs,
        )
        if op == "Scatter":
            node.opset = 10
        return node

    return draw


def scatter_nd(d, s):
    reduction = d.pick(["none", "add", "mul", "max", "min"])
    dt = d.pick(s.dtypes("data", reduction))
    r = d.rank(1, 8)
    shape = d.shape(r, zero=False)
    k = d.int(1, r)
    slots = size(shape[:k])
    q = d.int(1, min(8, 8 - (r - k) + 1))
    lead = d.fit(d.shape(q - 1, zero=False), size(shape[k:]))
    n = size(lead)
    if reduction == "none":
        n = min(n, slots)
        lead = [n] if q > 1 else []
        flat = d.g.permutation(slots)[:n]
    else:
        flat = d.g.integers(0, slots, n)
    ind = np.stack(np.unravel_index(flat, shape[:k]), axis=-1).reshape(lead + [k]).astype(np.int64)
    ushape = lead + shape[k:]
    return Node(
        "ScatterND",
        [
            _in("data", d.values(dt, shape)),
            _in("indices", ind),
            _in("updates", d.values(dt, ushape)),
        ],
        ["output"],
        {"reduction": reduction},
    )


def transpose(d, s):
    dt = d.pick(s.dtypes("data"))
    r = d.rank(0, 8)
    attrs = {}
    if r and d.chance(0.8):
        attrs["perm"] = [int(p) for p in d.g.permutation(r)]
    return Node("Transpose", [_in("data", d.values(dt, d.shape(r)))], ["transposed"], attrs)


def slice_(d, s):
    dt = d.pick(s.dtypes("data"))
    it = d.pick(s.dtypes("starts"))
    r = d.rank(1, 8)
    shape = d.shape(r)
    axes = d.subset(range(r), d.int(1, r))
    big = int(np.iinfo(NUMPY[it]).max)
    starts, ends, steps = [], [], []
    for a in axes:
        n = shape[a]
        step = d.pick([1, 1, 1, 2, 3, -1, -1, -2])
        lo, hi = (-n - 2, n + 2)
        st, en = d.int(lo, hi), d.int(lo, hi)
        if d.chance(0.15):
            en = big if step > 0 else -big
        if d.chance(0.1):
            st = -big if step > 0 else big
        starts.append(st)
        ends.append(en)
        steps.append(step)
    inputs = [_in("data", d.values(dt, shape)), _in("starts", np.array(starts, NUMPY[it])), _in("ends", np.array(ends, NUMPY[it]))]
    if d.chance(0.8) or any(st != 1 for st in steps) or axes != list(range(len(axes))):
        inputs.append(_in("axes", np.array([a - r if d.chance(0.3) else a for a in axes], NUMPY[it])))
        if d.chance(0.8) or any(st != 1 for st in steps):
            inputs.append(_in("steps", np.array(steps, NUMPY[it])))
    return Node("Slice", inputs, ["output"])


def pad(d, s):
    dt = d.pick(s.dtypes("data"))
    mode = d.pick(["constant", "constant", "reflect", "edge", "wrap"])
    r = d.rank(1 if mode != "constant" else 0, 8)
    shape = d.shape(r, zero=mode == "constant", min_dim=1)
    use_axes = r > 0 and d.chance(0.4)
    axes = d.subset(range(r), d.int(1, r)) if use_axes else list(range(r))
    before, after = [], []
    for a in axes:
        n = shape[a]
        if mode == "reflect":
            hi = n - 1
        elif mode == "wrap":
            hi = n
        else:
            hi = 4
        lo = -n if mode == "constant" and d.chance(0.2) else 0
        before.append(d.int(lo, hi))
        after.append(d.int(lo, hi))
    inputs = [_in("data", d.values(dt, shape)), _in("pads", _i64(before + after))]
    if mode == "constant" and d.chance(0.7):
        inputs.append(_in("constant_value", d.values(dt, [])))
    elif use_axes:
        inputs.append(_absent())
    if use_axes:
        inputs.append(_in("axes", _i64([a - r if d.chance(0.3) else a for a in axes])))
    return Node("Pad", inputs, ["output"], {"mode": mode})


def expand(d, s):
    dt = d.pick(s.dtypes("input"))
    out = d.shape(d.rank(0, 8))
    ishape = d.broadcast_from(out)
    # The shape input may itself hold 1s where the input is larger, and
    # fewer dimensions than the input (bidirectional broadcasting).
    target = list(out)
    for i in range(1, len(ishape) + 1):
        if d.chance(0.2):
            target[-i] = 1
    if len(target) > len(ishape) and d.chance(0.2):
        target = target[d.int(0, len(target) - len(ishape)) :]
    return Node("Expand", [_in("input", d.values(dt, ishape)), _in("shape", _i64(target))], ["output"])


def tile(d, s):
    dt = d.pick(s.dtypes("input"))
    r = d.rank(1, 8)
    shape = d.shape(r)
    reps = [d.pick([1, 1, 2, 3, 0]) if d.chance(0.95) else 0 for _ in range(r)]
    while size([a * b for a, b in zip(shape, reps)]) > (1 << 17):
        reps[reps.index(max(reps))] = 1
    return Node("Tile", [_in("input", d.values(dt, shape)), _in("repeats", _i64(reps))], ["output"])


def reshape(d, s):
    dt = d.pick(s.dtypes("data"))
    shape = d.shape(d.rank(0, 8))
    n = size(shape)
    # A target of the same size: the input's sizes regrouped.
    factors = []
    for dim in shape:
        m = dim
        for p in (2, 3, 5, 7):
            while m % p == 0 and m > 1:
                factors.append(p)
                m //= p
        if m > 1:
            factors.append(m)
    d.g.shuffle(factors)
    rank = d.int(0, 8) if n == 1 else d.int(1, min(8, max(1, len(factors))))
    target = [1] * rank
    for i, f in enumerate(factors):
        if rank:
            target[i % rank] *= f
    attrs = {}
    if n == 0:
        target = [0] + target[1:] if target else [0]
        return Node("Reshape", [_in("data", d.values(dt, shape)), _in("shape", _i64(target))], ["reshaped"], {"allowzero": 1})
    if rank and n > 0 and d.chance(0.4):
        target[d.int(0, rank - 1)] = -1
    elif d.chance(0.3):
        attrs["allowzero"] = d.int(0, 1)
    if attrs.get("allowzero", 0) == 0 and rank and n > 0 and -1 not in target:
        i = d.int(0, rank - 1)
        if i < len(shape) and shape[i] == target[i] and d.chance(0.5):
            target[i] = 0
    return Node("Reshape", [_in("data", d.values(dt, shape)), _in("shape", _i64(target))], ["reshaped"], attrs)


def squeeze(d, s):
    dt = d.pick(s.dtypes("data"))
    r = d.rank(0, 8)
    shape = [1 if d.chance(0.5) else n for n in d.shape(r)]
    ones = [i for i, n in enumerate(shape) if n == 1]
    inputs = [_in("data", d.values(dt, shape))]
    if ones and d.chance(0.7):
        axes = d.subset(ones, d.int(1, len(ones)))
        inputs.append(_in("axes", _i64([a - r if d.chance(0.3) else a for a in axes])))
    return Node("Squeeze", inputs, ["squeezed"])


def unsqueeze(d, s):
    dt = d.pick(s.dtypes("data"))
    r = d.rank(0, 7)
    k = d.int(1, 8 - r)
    out_r = r + k
    axes = d.subset(range(out_r), k)
    axes = [a - out_r if d.chance(0.3) else a for a in axes]
    return Node("Unsqueeze", [_in("data", d.values(dt, d.shape(r))), _in("axes", _i64(axes))], ["expanded"])


def flatten(d, s):
    dt = d.pick(s.dtypes("input"))
    r = d.rank(0, 8)
    attrs = {"axis": d.int(-r, r)} if d.chance(0.8) else {}
    return Node("Flatten", [_in("input", d.values(dt, d.shape(r)))], ["output"], attrs)


def concat(d, s):
    dt = d.pick(s.dtypes("inputs"))
    r = d.rank(1, 8)
    axis = d.int(-r, r - 1)
    shape = d.shape(r)
    n = d.int(1, VARIADIC)
    xs = []
    for _ in range(n):
        sh = list(shape)
        sh[axis] = d.pick([0, 1, 2, 3, shape[axis]])
        xs.append(d.values(dt, sh))
    return Node("Concat", [_in(f"x_{i}", x) for i, x in enumerate(xs)], ["concat_result"], {"axis": axis})


def split(d, s):
    dt = d.pick(s.dtypes("input"))
    r = d.rank(1, 8)
    axis = d.int(-r, r - 1)
    shape = d.shape(r)
    attrs = {"axis": axis}
    k = d.int(1, VARIADIC)
    lengths = d.chance(0.5) or shape[axis] == 0
    if not lengths and shape[axis] < k:
        # Equal parts need an axis of at least as many elements: k - 1
        # parts of c and a last one of 1 to c (opset 18's rule).
        c = d.int(1, 3)
        shape[axis] = c * (k - 1) + d.int(1, c)
        while size(shape) > MAX_ELEMENTS:
            others = [i for i in range(r) if i != axis % r]
            big = max(others, key=lambda i: shape[i])
            shape[big] //= 2
    n = shape[axis]
    inputs = [_in("input", d.values(dt, shape))]
    if lengths:
        cuts = sorted(d.g.integers(0, n + 1, k - 1).tolist())
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
        inputs.append(_in("split", _i64(sizes)))
    else:
        attrs["num_outputs"] = k
    return Node("Split", inputs, [f"out_{i}" for i in range(k)], attrs)


def one_hot(d, s):
    it = d.pick(s.dtypes("indices"))
    vt = d.pick(s.dtypes("values"))
    # ONNX's shape inference requires indices of rank 1 or more.
    r = d.rank(1, 7)
    depth = d.int(1, 12)
    dt_depth = d.pick(s.dtypes("depth"))
    bound = depth + 3
    if it in FLOATS:
        # Integral values: ONNX does not say how a fraction is read.
        ind = d.g.integers(-bound, bound, d.shape(r)).astype(NUMPY[it])
    else:
        lo = -bound if it in SIGNED else 0
        ind = d.values(it, d.shape(r), lo, bound, special=False)
    depth_arr = np.array(depth if d.chance(0.5) else [depth], NUMPY[dt_depth])
    values = d.values(vt, [2])
    attrs = {"axis": d.int(-r - 1, r)} if d.chance(0.8) else {}
    return Node("OneHot", [_in("indices", ind), _in("depth", depth_arr), _in("values", values)], ["output"], attrs)


def cast(d, s):
    src = d.pick(s.dtypes("input"))
    dst = d.pick(s.dtypes("output"))
    shape = d.shape(d.rank(0, 8))
    if src in FLOATS and dst in INTS:
        # Out of range and NaN are undefined: values inside the target's range.
        info = np.iinfo(NUMPY[dst])
        lo, hi = float(info.min), float(info.max)
        x = d.values(src, shape, special=False)
        x = np.where(np.isfinite(x), x, 0).astype(NUMPY[src])
        bound = np.array(min(hi, float(np.finfo(NUMPY[src]).max)), NUMPY[src])
        while float(bound) >= hi + 1:
            bound = np.nextafter(bound, np.array(0, NUMPY[src]))
        x = np.clip(x, max(lo, -float(bound)), float(bound)).astype(NUMPY[src])
        if dst in INTS and dst.startswith("u"):
            x = np.abs(x)
    else:
        x = d.values(src, shape)
    return Node("Cast", [_in("input", x)], ["output"], {"to": dst})


def clip(d, s):
    dt = d.pick(s.dtypes("input"))
    shape = d.shape(d.rank(0, 8))
    inputs = [_in("input", d.values(dt, shape))]
    # Clip-13 does not say what min > max or a NaN bound gives.
    lo, hi = (np.nan_to_num(d.values(dt, [], special=d.chance(0.2)), nan=0, posinf=np.inf, neginf=-np.inf) for _ in "ab")
    if lo > hi:
        lo, hi = hi, lo
    has_min, has_max = d.chance(0.7), d.chance(0.7)
    if has_min:
        inputs.append(_in("min", lo))
    elif has_max:
        inputs.append(_absent())
    if has_max:
        inputs.append(_in("max", hi))
    return Node("Clip", inputs, ["output"])


def where(d, s):
    dt = d.pick(s.dtypes("x"))
    out = d.shape(d.rank(0, 8))
    shapes = [d.broadcast_from(out) if d.chance(0.5) else out for _ in range(3)]
    return Node(
        "Where",
        [
            _in("condition", d.values("bool", shapes[0])),
            _in("X", d.values(dt, shapes[1])),
            _in("Y", d.values(dt, shapes[2])),
        ],
        ["output"],
    )


def mod(d, s):
    node = _binary("Mod", nonzero_b=True)(d, s)
    dt = str(node.input(0).dtype)
    node.attrs["fmod"] = 1 if dt in FLOATS else d.int(0, 1)
    return node


def pow_(d, s):
    xt = d.pick(s.dtypes("x"))
    yt = d.pick(s.dtypes("y"))
    out = d.shape(d.rank(0, 8))
    sx = d.broadcast_from(out) if d.chance(0.5) else out
    sy = d.broadcast_from(out) if d.chance(0.5) else out
    x = d.values(xt, sx, -6, 6) if xt in INTS else d.values(xt, sx)
    # Integer powers: small non-negative exponents whose results fit.
    y = d.values(yt, sy, 0, 4) if yt in INTS else d.values(yt, sy)
    if xt in INTS and yt in FLOATS:
        y = np.abs(np.nan_to_num(np.round(y), nan=2.0, posinf=2.0, neginf=2.0)) % 5
        y = y.astype(NUMPY[yt])
    return Node("Pow", [_in("X", x), _in("Y", y)], ["Z"])


def bit_shift(d, s):
    dt = d.pick(s.dtypes("x"))
    out = d.shape(d.rank(0, 8))
    bits = np.iinfo(NUMPY[dt]).bits
    x = d.values(dt, d.broadcast_from(out) if d.chance(0.5) else out)
    y = d.values(dt, d.broadcast_from(out) if d.chance(0.5) else out, 0, bits - 1, special=False)
    return Node("BitShift", [_in("X", x), _in("Y", y)], ["Z"], {"direction": d.pick(["LEFT", "RIGHT"])})


def _with_attrs(base, **draws):
    def draw(d, s):
        node = base(d, s)
        for name, f in draws.items():
            if d.chance(0.8):
                node.attrs[name] = f(d)
        return node

    return draw


def _is_inf(d, s):
    node = _unary("IsInf")(d, s)
    for a in ("detect_positive", "detect_negative"):
        if d.chance(0.6):
            node.attrs[a] = d.int(0, 1)
    return node


# Operator name -> drawer(Draw, OpSupport) -> Node.
DRAWERS = {
    "ArgMax": _argminmax("ArgMax"),
    "ArgMin": _argminmax("ArgMin"),
    "ReduceSum": _reduce("ReduceSum"),
    "ReduceMean": _reduce("ReduceMean"),
    "ReduceProd": _reduce("ReduceProd"),
    "ReduceL1": _reduce("ReduceL1"),
    "ReduceL2": _reduce("ReduceL2"),
    "ReduceSumSquare": _reduce("ReduceSumSquare"),
    "ReduceLogSum": _reduce("ReduceLogSum", positive=True),
    "ReduceLogSumExp": _reduce("ReduceLogSumExp"),
    "ReduceMax": _reduce("ReduceMax"),
    "ReduceMin": _reduce("ReduceMin"),
    "Gather": gather,
    "GatherElements": gather_elements,
    "GatherND": gather_nd,
    "ScatterElements": _scatter_elements("ScatterElements", ["none", "none", "add", "mul", "max", "min"]),
    "Scatter": _scatter_elements("Scatter", ["none"]),
    "ScatterND": scatter_nd,
    "Transpose": transpose,
    "Slice": slice_,
    "Pad": pad,
    "Expand": expand,
    "Tile": tile,
    "Reshape": reshape,
    "Squeeze": squeeze,
    "Unsqueeze": unsqueeze,
    "Flatten": flatten,
    "Identity": _unary("Identity", "input", "output"),
    "Concat": concat,
    "Split": split,
    "OneHot": one_hot,
    "Add": _binary("Add"),
    "Sub": _binary("Sub"),
    "Mul": _binary("Mul"),
    "Div": _binary("Div", nonzero_b=True),
    "Pow": pow_,
    "Mod": mod,
    "Max": _variadic("Max", VARIADIC),
    "Min": _variadic("Min", VARIADIC),
    "Sum": _variadic("Sum", VARIADIC),
    "Mean": _variadic("Mean", VARIADIC),
    "Clip": clip,
    "Equal": _binary("Equal"),
    "Less": _binary("Less"),
    "Greater": _binary("Greater"),
    "LessOrEqual": _binary("LessOrEqual"),
    "GreaterOrEqual": _binary("GreaterOrEqual"),
    "And": _binary("And"),
    "Or": _binary("Or"),
    "Xor": _binary("Xor"),
    "Not": _unary("Not"),
    "Where": where,
    "Abs": _unary("Abs"),
    "Neg": _unary("Neg"),
    "Relu": _unary("Relu"),
    "LeakyRelu": _with_attrs(_unary("LeakyRelu"), alpha=lambda d: d.float_attr(-2.0, 2.0)),
    "Sigmoid": _unary("Sigmoid"),
    "Tanh": _unary("Tanh", "input", "output"),
    "Exp": _unary("Exp", "input", "output"),
    "Log": _unary("Log", "input", "output"),
    "Sqrt": _unary("Sqrt"),
    "Reciprocal": _unary("Reciprocal"),
    "Floor": _unary("Floor"),
    "Ceil": _unary("Ceil"),
    "Round": _unary("Round"),
    "Sign": _unary("Sign", "input", "output"),
    "IsNaN": _unary("IsNaN"),
    "IsInf": _is_inf,
    "Cast": cast,
    "Elu": _with_attrs(_unary("Elu"), alpha=lambda d: d.float_attr(0.0, 3.0)),
    "HardSigmoid": _with_attrs(
        _unary("HardSigmoid"),
        alpha=lambda d: d.float_attr(-1.0, 1.0),
        beta=lambda d: d.float_attr(-1.0, 1.0),
    ),
    "BitwiseAnd": _binary("BitwiseAnd"),
    "BitwiseOr": _binary("BitwiseOr"),
    "BitwiseXor": _binary("BitwiseXor"),
    "BitwiseNot": _unary("BitwiseNot"),
    "BitShift": bit_shift,
}
