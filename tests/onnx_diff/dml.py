"""The DirectML twins of the ONNX draws: for an ONNX operator with a
DirectML operator of the same meaning in the catalog (`specs/*.op`), the
DirectML form of the same call, expecting the oracles' outputs.

`TWINS` is the one table: ONNX operator -> (DirectML operator, or a
function of the node choosing one; how its tensors are laid out; its
attributes). DirectML has no BOOL (logical tensors are UINT8 0/1), no
rank 0 (a scalar is `[1]`), and broadcasts only through strides (an
input of the output's sizes with stride 0 on a repeated dimension). A
draw the DirectML form cannot express, or where its spec's documented
rule differs from ONNX's, raises `Skip`, and is counted, not run."""

from pathlib import Path

import numpy as np

from .spec import parse_spec
from .values import FLOATS, encode


class Skip(Exception):
    """The DirectML form cannot express the draw (the reason)."""


def _tensor(a, shape=None, strides=None):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    t = {"dtype": str(a.dtype), "shape": list(a.shape if shape is None else shape), "data": encode(a)}
    if strides is not None:
        t["strides"] = strides
    return t


def _lead(a, rank):
    """`a` with leading 1s up to `rank` dimensions."""
    a = np.asarray(a)
    return a.reshape([1] * (rank - a.ndim) + list(a.shape))


def _broadcast(a, out):
    """`a` as an input of sizes `out`: a dimension it repeats has stride 0."""
    a = _lead(a, len(out))
    if list(a.shape) == list(out) or 0 in out:
        # An empty output's buffer has no element to repeat.
        return _tensor(np.broadcast_to(a, out))
    strides, step = [0] * len(out), 1
    for d in reversed(range(len(out))):
        strides[d] = 0 if a.shape[d] == 1 and out[d] != 1 else step
        step *= a.shape[d]
    return _tensor(a, out, strides)


def _present(node):
    return [a for _, a in node.inputs if a is not None]


def _axis(node, r):
    return node.attrs.get("axis", 0) % r


# Layouts: (node, expected outputs) -> (inputs, outputs, attributes).


def _elementwise(*names):
    """Inputs broadcast to the output's sizes by strides; rank 0 as [1]."""

    def form(node, outs):
        xs = _present(node)
        if len(xs) != len(names):
            raise Skip(f"{len(xs)} inputs")
        out = list(outs[0].shape) or [1]
        inputs = {n: _broadcast(a, out) for n, a in zip(names, xs)}
        return inputs, {"output": _tensor(np.reshape(outs[0], out))}, {}

    return form


def _transpose(node, outs):
    """ElementWiseIdentity reading the input through permuted strides."""
    x = node.input(0)
    if x.ndim == 0:
        raise Skip("rank 0")
    perm = node.attrs.get("perm", list(reversed(range(x.ndim))))
    packed = [int(np.prod(x.shape[d + 1 :], dtype=np.int64)) for d in range(x.ndim)]
    inp = _tensor(x, [x.shape[p] for p in perm], [packed[p] for p in perm])
    return {"input": inp}, {"output": _tensor(outs[0])}, {}


def _expand(node, outs):
    out = list(outs[0].shape) or [1]
    return {"input": _broadcast(node.input(0), out)}, {"output": _tensor(np.reshape(outs[0], out))}, {}


def _argminmax(node, outs):
    x = node.input(0)
    a = _axis(node, x.ndim)
    shape = [1 if d == a else n for d, n in enumerate(x.shape)]
    attrs = {"axes": [a], "axis_direction": "DECREASING" if node.attrs.get("select_last_index") else "INCREASING"}
    return {"input": _tensor(x)}, {"output": _tensor(np.reshape(outs[0], shape))}, attrs


REDUCE = {
    "ReduceSum": "SUM",
    "ReduceMean": "AVERAGE",
    "ReduceProd": "MULTIPLY",
    "ReduceL1": "L1",
    "ReduceL2": "L2",
    "ReduceSumSquare": "SUM_SQUARE",
    "ReduceLogSum": "LOG_SUM",
    "ReduceLogSumExp": "LOG_SUM_EXP",
    "ReduceMax": "MAX",
    "ReduceMin": "MIN",
}


def _reduce(node, outs):
    x = node.input(0)
    x = x.reshape([1]) if x.ndim == 0 else x
    r = x.ndim
    axes = node.input(1)
    if axes is None or axes.size == 0:
        if node.attrs.get("noop_with_empty_axes") == 1:
            # DirectML: "AxisCount must be at least 1"; no identity form.
            raise Skip("noop_with_empty_axes with no axes")
        axes = range(r)
    axes = sorted(int(a) % r for a in np.reshape(axes, -1))
    shape = [1 if d in axes else n for d, n in enumerate(x.shape)]
    attrs = {"function": REDUCE[node.op], "axes": axes}
    return {"input": _tensor(x)}, {"output": _tensor(np.reshape(outs[0], shape))}, attrs


def _gather(node, outs):
    x, ind = node.input(0), node.input(1)
    r, q = x.ndim, ind.ndim
    if q > r:
        # "IndicesTensor, InputTensor, and OutputTensor must have the same
        # DimensionCount".
        raise Skip("indices of higher rank than the input")
    full = list(outs[0].shape)
    if any(n != 1 for n in full[: max(len(full) - r, 0)]):
        # "leading 1s that would overflow the DimensionCount are cropped",
        # no other dimension.
        raise Skip("output dimensions beyond the input's rank")
    shape = full[len(full) - r :] if len(full) > r else [1] * (r - len(full)) + full
    attrs = {"axis": _axis(node, r), "index_dimensions": q}
    return (
        {"input": _tensor(x), "indices": _tensor(_lead(ind, r))},
        {"output": _tensor(np.reshape(outs[0], shape))},
        attrs,
    )


def _gather_elements(node, outs):
    x, ind = node.input(0), node.input(1)
    a = _axis(node, x.ndim)
    if any(d != a and i != n for d, (i, n) in enumerate(zip(ind.shape, x.shape))):
        # "IndicesTensor.Sizes must match InputTensor.Sizes except on Axis".
        raise Skip("indices smaller than the input off the axis")
    return {"input": _tensor(x), "indices": _tensor(ind)}, {"output": _tensor(outs[0])}, {"axis": a}


def _gather_nd(node, outs):
    x, ind = node.input(0), node.input(1)
    b = node.attrs.get("batch_dims", 0)
    r = max(x.ndim, ind.ndim, np.ndim(outs[0]))
    attrs = {"input_dimension_count": x.ndim, "indices_dimension_count": ind.ndim}
    if b:
        attrs["batch_dimension_count"] = b
    return (
        {"input": _tensor(_lead(x, r)), "indices": _tensor(_lead(ind, r))},
        {"output": _tensor(_lead(outs[0], r))},
        attrs,
    )


def _scatter(node, outs):
    x, ind, upd = node.input(0), node.input(1), node.input(2)
    if node.attrs.get("reduction", "none") != "none":
        raise Skip("a reduction")
    a = _axis(node, x.ndim)
    if any(d != a and i != n for d, (i, n) in enumerate(zip(ind.shape, x.shape))):
        # "IndicesTensor.Sizes must match InputTensor.Sizes except on Axis".
        raise Skip("indices smaller than the input off the axis")
    inputs = {"input": _tensor(x), "indices": _tensor(ind), "updates": _tensor(upd)}
    return inputs, {"output": _tensor(outs[0])}, {"axis": a}


def _scatter_nd(node, outs):
    x, ind, upd = node.input(0), node.input(1), node.input(2)
    if node.attrs.get("reduction", "none") != "none":
        raise Skip("a reduction")
    r = max(x.ndim, ind.ndim, upd.ndim)
    inputs = {"input": _tensor(_lead(x, r)), "indices": _tensor(_lead(ind, r)), "updates": _tensor(_lead(upd, r))}
    attrs = {"input_dimension_count": x.ndim, "indices_dimension_count": ind.ndim}
    return inputs, {"output": _tensor(_lead(outs[0], r))}, attrs


def _join(node, outs):
    xs = _present(node)
    inputs = {f"inputs_{i}": _tensor(x) for i, x in enumerate(xs)}
    return inputs, {"output": _tensor(outs[0])}, {"axis": _axis(node, xs[0].ndim)}


def _split(node, outs):
    x = node.input(0)
    outputs = {f"outputs_{i}": _tensor(o) for i, o in enumerate(outs)}
    return {"input": _tensor(x)}, outputs, {"axis": _axis(node, x.ndim)}


PADDING = {"constant": "CONSTANT", "edge": "EDGE", "reflect": "REFLECTION"}


def _pad(node, outs):
    x, pads, value, axes = (node.input(i) for i in range(4))
    r = x.ndim
    mode = node.attrs.get("mode", "constant")
    if r == 0 or mode not in PADDING:
        raise Skip("rank 0" if r == 0 else f"mode {mode}")
    axes = range(r) if axes is None else [int(a) % r for a in axes]
    start, end = [0] * r, [0] * r
    for i, a in enumerate(axes):
        start[a], end[a] = int(pads[i]), int(pads[i + len(axes)])
    if min(start + end) < 0:
        raise Skip("negative pads (StartPadding and EndPadding are UINT)")
    attrs = {
        "padding_mode": PADDING[mode],
        "padding_value_data_type": "DML_TENSOR_DATA_TYPE_" + _tensor(outs[0].reshape(-1)[:0])["dtype"].upper(),
        "start_padding": start,
        "end_padding": end,
    }
    if value is not None:
        v = value.reshape(-1)[0].item()
        # A number (f64) converted as `cast` converts: non-finite and
        # 64-bit integers beyond 2^53 are not numbers the case file holds.
        if isinstance(v, float) and not np.isfinite(v) or isinstance(v, int) and abs(v) > 2**53:
            raise Skip("a padding value an f64 attribute does not hold")
        attrs["padding_value"] = int(v) if isinstance(v, (bool, int)) else v
    return {"input": _tensor(x)}, {"output": _tensor(outs[0])}, attrs


def _tile(node, outs):
    reps = [int(n) for n in node.input(1)]
    if 0 in reps:
        # "Repeats" must be greater than 0.
        raise Skip("a repeat of 0")
    return {"input": _tensor(node.input(0))}, {"output": _tensor(outs[0])}, {"repeats": reps}


def _one_hot(node, outs):
    ind, values = node.input(0), node.input(2)
    out = np.asarray(outs[0])
    a = node.attrs.get("axis", -1) % out.ndim
    ishape = list(ind.shape[:a]) + [1] + list(ind.shape[a:])
    inputs = {"indices": _tensor(ind.reshape(ishape)), "values": _tensor(_lead(values, out.ndim))}
    return inputs, {"output": _tensor(out)}, {"axis": a}


def _clip(node, outs):
    x, lo, hi = (node.input(i) for i in range(3))
    dt = x.dtype
    info = np.finfo(dt) if str(dt) in FLOATS else np.iinfo(dt)
    # ONNX Clip-13: absent bounds "default to numeric_limits::lowest() and
    # numeric_limits::max()".
    lo = info.min if lo is None else lo.item()
    hi = info.max if hi is None else hi.item()
    if not (np.isfinite(float(lo)) and np.isfinite(float(hi))):
        raise Skip("an infinite bound (attributes are finite numbers)")
    out = list(outs[0].shape) or [1]
    attrs = {"min": np.asarray(lo).item(), "max": np.asarray(hi).item()}
    return {"input": _broadcast(x, out)}, {"output": _tensor(np.reshape(outs[0], out))}, attrs


def _cast(node, outs):
    if node.input(0).dtype == np.bool_ or node.attrs["to"] == "bool":
        # No BOOL in DirectML: a UINT8 stand-in casts differently (2 -> true).
        raise Skip("bool")
    return _elementwise("input")(node, outs)


def _pow(node, outs):
    if node.input(0).dtype != node.input(1).dtype:
        # element_wise_pow.op: "`ExponentTensor` converts to `InputTensor`'s
        # type first"; ONNX Pow computes in both types.
        raise Skip("mixed base and exponent types")
    return _elementwise("input", "exponent")(node, outs)


def _is_inf(node):
    pos, neg = node.attrs.get("detect_positive", 1), node.attrs.get("detect_negative", 1)
    if not (pos or neg):
        raise Skip("neither infinity detected")
    return {"infinity_mode": "EITHER" if pos and neg else "POSITIVE" if pos else "NEGATIVE"}


def _copy(*names):
    return lambda node: {n: node.attrs[n] for n in names if n in node.attrs}


_UNARY = _elementwise("input")
_BINARY = _elementwise("a", "b")

# ONNX operator -> (DirectML operator or a function of the node giving it,
# layout, attributes of the node). The variadic Max, Min, Sum and Mean have
# a twin of two inputs.
TWINS = {
    "Abs": ("ElementWiseAbs", _UNARY, None),
    "Neg": ("ElementWiseNegate", _UNARY, None),
    "Identity": ("ElementWiseIdentity", _UNARY, None),
    "Ceil": ("ElementWiseCeil", _UNARY, None),
    "Floor": ("ElementWiseFloor", _UNARY, None),
    "Round": ("ElementWiseRound", _UNARY, None),
    "Exp": ("ElementWiseExp", _UNARY, None),
    "Log": ("ElementWiseLog", _UNARY, None),
    "Sqrt": ("ElementWiseSqrt", _UNARY, None),
    "Reciprocal": ("ElementWiseRecip", _UNARY, None),
    "Sign": ("ElementWiseSign", _UNARY, None),
    "IsNaN": ("ElementWiseIsNan", _UNARY, None),
    "IsInf": ("ElementWiseIsInfinity", _UNARY, _is_inf),
    "Not": ("ElementWiseLogicalNot", _UNARY, None),
    "BitwiseNot": ("ElementWiseBitNot", _UNARY, None),
    "Relu": ("ActivationRelu", _UNARY, None),
    "Sigmoid": ("ActivationSigmoid", _UNARY, None),
    "Tanh": ("ActivationTanh", _UNARY, None),
    "Elu": ("ActivationElu", _UNARY, _copy("alpha")),
    "LeakyRelu": ("ActivationLeakyRelu", _UNARY, _copy("alpha")),
    "HardSigmoid": ("ActivationHardSigmoid", _UNARY, _copy("alpha", "beta")),
    "Cast": ("Cast", _cast, None),
    "Clip": ("ElementWiseClip1", _clip, None),
    "Add": ("ElementWiseAdd", _BINARY, None),
    "Sub": ("ElementWiseSubtract", _BINARY, None),
    "Mul": ("ElementWiseMultiply", _BINARY, None),
    "Div": ("ElementWiseDivide", _BINARY, None),
    "Pow": ("ElementWisePow", _pow, None),
    # Mod-13: "fmod ... the sign of the remainder is the same as that of
    # the Dividend"; else Python's `%`, the divisor's sign.
    "Mod": (lambda n: "ElementWiseModulus" + ("Truncate" if n.attrs.get("fmod") else "Floor"), _BINARY, None),
    "Max": ("ElementWiseMax", _BINARY, None),
    "Min": ("ElementWiseMin", _BINARY, None),
    "Sum": ("ElementWiseAdd", _BINARY, None),
    "Mean": ("ElementWiseMean", _BINARY, None),
    "Equal": ("ElementWiseLogicalEquals", _BINARY, None),
    "Greater": ("ElementWiseLogicalGreaterThan", _BINARY, None),
    "GreaterOrEqual": ("ElementWiseLogicalGreaterThanOrEqual", _BINARY, None),
    "Less": ("ElementWiseLogicalLessThan", _BINARY, None),
    "LessOrEqual": ("ElementWiseLogicalLessThanOrEqual", _BINARY, None),
    "And": ("ElementWiseLogicalAnd", _BINARY, None),
    "Or": ("ElementWiseLogicalOr", _BINARY, None),
    "Xor": ("ElementWiseLogicalXor", _BINARY, None),
    "BitwiseAnd": ("ElementWiseBitAnd", _BINARY, None),
    "BitwiseOr": ("ElementWiseBitOr", _BINARY, None),
    "BitwiseXor": ("ElementWiseBitXor", _BINARY, None),
    "BitShift": (
        lambda n: "ElementWiseBitShiftLeft" if n.attrs["direction"] == "LEFT" else "ElementWiseBitShiftRight",
        _BINARY,
        None,
    ),
    "Where": ("ElementWiseIf", _elementwise("condition", "a", "b"), None),
    "Transpose": ("ElementWiseIdentity", _transpose, None),
    "Expand": ("ElementWiseIdentity", _expand, None),
    "ArgMax": ("ArgMax", _argminmax, None),
    "ArgMin": ("ArgMin", _argminmax, None),
    **{op: ("Reduce", _reduce, None) for op in REDUCE},
    "Gather": ("Gather", _gather, None),
    "GatherElements": ("GatherElements", _gather_elements, None),
    "GatherND": (lambda n: "GatherND1" if n.attrs.get("batch_dims") else "GatherND", _gather_nd, None),
    "Scatter": ("Scatter", _scatter, None),
    "ScatterElements": ("Scatter", _scatter, None),
    "ScatterND": ("ScatterND", _scatter_nd, None),
    "Concat": ("Join", _join, None),
    "Split": ("Split", _split, None),
    "Pad": ("Padding1", _pad, None),
    "Tile": ("Tile", _tile, None),
    "OneHot": ("OneHot", _one_hot, None),
}


# ONNX Runtime's float Tanh, Sigmoid and Elu are approximations looser
# than the DirectML specs' ULP bounds near 0 (its Tanh of the subnormal
# 0x00400000 is 0x0040000e, where tanh(x) = x to within 2^-127 of x): their
# twins expect the function in float64, rounded once, as the specs' bounds
# are stated.
_YARDSTICK = {
    "Tanh": lambda x, node: np.tanh(x),
    "Sigmoid": lambda x, node: 1.0 / (1.0 + np.exp(-x)),
    "Elu": lambda x, node: np.where(x > 0, x, float(node.attrs.get("alpha", 1.0)) * np.expm1(x)),
}


def _expected(node, outputs):
    """The outputs a twin expects: ONNX Runtime's, or for `_YARDSTICK`'s
    operators the float64 function of the input rounded once."""
    f = _YARDSTICK.get(node.op)
    x = node.input(0)
    if f is None or x is None or str(x.dtype) not in FLOATS:
        return [np.asarray(o) for o in outputs]
    with np.errstate(all="ignore"):
        return [np.asarray(f(x.astype(np.float64), node)).astype(x.dtype)]


def load(root):
    """The support tables of `specs/*.op` by DirectML operator name."""
    out = {}
    for path in sorted(Path(root, "specs").glob("*.op")):
        spec = parse_spec(path.read_text())
        if spec.name:
            out[spec.name] = spec
    return out


def _check(spec, tensors, when):
    """Skips a tensor of a data type or rank the spec's tables lack."""
    for name, t in tensors.items():
        support = spec._table(when).get(name.rsplit("_", 1)[0] if name[-1].isdigit() else name)
        if support is None:
            continue
        if t["dtype"] not in support.dtypes:
            raise Skip(f"{t['dtype'].upper()} {name}")
        lo, hi = support.ranks
        if not lo <= len(t["shape"]) <= hi:
            raise Skip(f"rank {len(t['shape'])} {name}")


def twin(specs, node, outputs):
    """The DirectML operator of `node`'s twin and its case (without
    name), or the operator and why it is not expressed (a str); None
    when the node's operator has no twin."""
    entry = TWINS.get(node.op)
    if entry is None:
        return None
    dml, form, attrs_of = entry
    dml = dml(node) if callable(dml) else dml
    try:
        if len(outputs) > 8 or len(_present(node)) > 6:
            # Join's widest instance takes six inputs, Split's eight
            # outputs; `ops run` chains only the onnx operators.
            raise Skip("more tensors than one instance takes")
        inputs, outs, attrs = form(node, _expected(node, outputs))
        if attrs_of:
            attrs.update(attrs_of(node))
        _check(specs[dml], {**inputs, **outs}, attrs.get("function", "").lower() or None)
    except Skip as e:
        return dml, str(e)
    return dml, {"op": dml, "attributes": attrs, "inputs": inputs, "outputs": outs}
