"""The oracles: ONNX Runtime's CPU execution provider runs each drawn node;
ONNX's reference evaluator (`onnx.reference.ReferenceEvaluator`) runs it
too, and where the two disagree a listed deviation of ONNX Runtime from
ONNX (`DEVIATIONS`) names the evidence and the expected value comes from
the reference evaluator, or from numpy where the evaluator's answer is no
better (`NUMPY_ORACLE`). Where ONNX Runtime and ONNX's function body of the
operator disagree on NaN (`BODY_NANS`), those elements come from the
function body."""

import numpy as np
import onnx
import onnxruntime as ort

ort.set_default_logger_severity(3)
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from .values import FLOATS

ONNX_TYPES = {
    "float64": TensorProto.DOUBLE,
    "float32": TensorProto.FLOAT,
    "float16": TensorProto.FLOAT16,
    "int64": TensorProto.INT64,
    "int32": TensorProto.INT32,
    "int16": TensorProto.INT16,
    "int8": TensorProto.INT8,
    "uint64": TensorProto.UINT64,
    "uint32": TensorProto.UINT32,
    "uint16": TensorProto.UINT16,
    "uint8": TensorProto.UINT8,
    "bool": TensorProto.BOOL,
}


class Unsupported(Exception):
    """ONNX Runtime's CPU execution provider has no kernel for the node's
    data types."""


class Rejected(Exception):
    """ONNX Runtime rejected the model or failed to run it."""


def model(node):
    """The single-node ONNX model of `node`."""
    attrs = dict(node.attrs)
    if node.op == "Cast":
        attrs["to"] = ONNX_TYPES[attrs["to"]]
    graph_inputs = [
        helper.make_tensor_value_info(name, ONNX_TYPES[str(a.dtype)], list(a.shape))
        for name, a in node.inputs
        if a is not None
    ]
    n = helper.make_node(node.op, [name for name, _ in node.inputs], node.outputs, **attrs)
    g = helper.make_graph(
        [n], "onnx_diff", graph_inputs, [helper.make_empty_tensor_value_info(o) for o in node.outputs]
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", node.opset)])
    m.ir_version = 10 if node.opset >= 21 else 5
    return m


def feeds(node):
    return {name: a for name, a in node.inputs if a is not None}


def run_ort(m, node):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        sess = ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 (ORT raises its own classes)
        text = str(e)
        if "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text:
            raise Unsupported(text.splitlines()[0]) from None
        raise Rejected(text.splitlines()[0][:300]) from None
    try:
        return sess.run(None, feeds(node))
    except Exception as e:  # noqa: BLE001
        text = str(e).splitlines()[0]
        if "not supported" in text:
            raise Unsupported(text[:300]) from None
        raise Rejected(text[:300]) from None


def run_reference(m, node):
    limit = SLOW_REFERENCE.get(node.op)
    if limit is not None and node.input(1).size > limit:
        raise TimeoutError("not run: too many index tuples for its Python loops")
    return ReferenceEvaluator(m).run(None, feeds(node))


def run_function_body(node):
    """The node run as its operator's ONNX function body (the schema's, at
    the node's opset, as a local function) by the reference evaluator."""
    schema = onnx.defs.get_schema(node.op, node.opset)
    body = onnx.FunctionProto()
    body.CopyFrom(schema.function_body)
    body.domain = "onnx_diff.body"
    m = model(node)
    m.graph.node[0].domain = body.domain
    m.opset_import.append(helper.make_opsetid(body.domain, 1))
    m.functions.append(body)
    with np.errstate(all="ignore"):
        return ReferenceEvaluator(m).run(None, feeds(node))


def widen(node, to="float64"):
    """A copy of `node` with its float inputs in type `to` when they are
    all of one narrower type (else None), and that type."""
    if node.op == "Cast":
        return None, None
    from .operators import Node

    kinds = {str(a.dtype) for _, a in node.inputs if a is not None and str(a.dtype) in FLOATS}
    if len(kinds) != 1 or np.finfo(kinds.copy().pop()).bits >= np.finfo(to).bits:
        return None, None
    narrow = kinds.pop()
    inputs = [(n, a.astype(to) if a is not None and str(a.dtype) == narrow else a) for n, a in node.inputs]
    return Node(node.op, inputs, node.outputs, node.attrs, node.opset), narrow


def _narrow(outputs, narrow, wide="float64"):
    with np.errstate(all="ignore"):
        return [np.asarray(o).astype(narrow) if str(np.asarray(o).dtype) == wide else np.asarray(o) for o in outputs]


def run_reference_wide(node):
    """The reference evaluator on float64 copies of the float16 and float32
    inputs, its outputs rounded back to their type once (None when that
    changes the node's meaning or fails)."""
    wide, narrow = widen(node)
    if wide is None:
        return None
    try:
        with np.errstate(all="ignore"):
            return _narrow(run_reference(model(wide), wide), narrow)
    except Exception:  # noqa: BLE001
        return None


# Operators that accumulate many terms: ONNX Runtime accumulates float16
# and float32 in the input type (its error grows with the terms), so their
# expected values come from ONNX Runtime on float64 copies of the inputs,
# rounded once, as ops' contract (computed in float64) reads.
ACCUMULATING = {
    "Sum",
    "Mean",
    "ReduceSum",
    "ReduceMean",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceSumSquare",
    "ReduceLogSum",
    "ReduceLogSumExp",
}


def inferred_shapes(m, node):
    """The output shapes ONNX's shape inference gives (None where unknown),
    the integer inputs after the first made constants."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    for name, a in node.inputs[1:]:
        if a is not None and str(a.dtype) in ("int64", "int32") and a.ndim <= 1:
            m.graph.initializer.append(onnx.numpy_helper.from_array(a, name))
    try:
        out = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True).graph.output
    except Exception:  # noqa: BLE001
        return None
    shapes = []
    for o in out:
        t = o.type.tensor_type
        if not t.HasField("shape") or any(not d.HasField("dim_value") for d in t.shape.dim):
            shapes.append(None)
        else:
            shapes.append([d.dim_value for d in t.shape.dim])
    return shapes


# How far apart the two oracles' floats may be and still agree: the
# reference evaluator computes in the input type with numpy (float16
# intermediates), so this looks for semantic differences, not ULPs.
TOLERANCE = {"float16": 1e-2, "float32": 1e-3, "float64": 1e-9}
# The reference evaluator's GatherND and ScatterND loop in Python: beyond
# this many index tuples its answer is not waited for.
SLOW_REFERENCE = {"GatherND": 4096, "ScatterND": 4096}


def _mismatch(a, b, exact):
    """The elements where `a` and `b` differ (a boolean array), or None
    when their shapes differ."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return None
    if str(a.dtype) not in FLOATS:
        return ~(a == b.astype(a.dtype))
    x, y = a.astype(np.float64), b.astype(a.dtype).astype(np.float64)
    same = (x == y) | (np.isnan(x) & np.isnan(y))
    if not exact:
        with np.errstate(all="ignore"):
            tol = TOLERANCE[str(a.dtype)] * np.maximum(np.abs(x), np.abs(y)) + float(np.finfo(a.dtype).tiny)
            same |= np.isfinite(x) & np.isfinite(y) & (np.abs(x - y) <= tol)
    return ~same


def only_finite_differences(got, want, exact):
    """Whether every difference between the outputs is between two finite
    floats (a matter of precision, not of semantics)."""
    for a, b in zip(got, want):
        bad = _mismatch(a, b, exact)
        if bad is None:
            return False
        if bad.any():
            if str(np.asarray(a).dtype) not in FLOATS:
                return False
            x, y = np.asarray(a)[bad], np.asarray(b).astype(np.asarray(a).dtype)[bad]
            if not (np.isfinite(x).all() and np.isfinite(y).all()):
                return False
    return True


def first_output_difference(node, got, want, exact):
    """Where the outputs `got` and `want` of `node` first differ, named by
    output (`first_difference`); None when they agree."""
    for name, a, b in zip(node.outputs, got, want):
        d = first_difference(a, b, exact)
        if d:
            return f"{name} {d}"
    return None


def first_difference(a, b, exact):
    """Where two outputs differ (None when they agree): NaN matches NaN,
    -0.0 matches 0.0; floats of an inexact operator within a relative
    tolerance of their type."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return f"shapes {list(a.shape)} and {list(b.shape)}"
    dt = str(a.dtype)
    if dt in FLOATS:
        b = b.astype(a.dtype)
        x, y = a.astype(np.float64), b.astype(np.float64)
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        if not exact:
            with np.errstate(all="ignore"):
                tol = TOLERANCE[dt] * np.maximum(np.abs(x), np.abs(y)) + float(np.finfo(a.dtype).tiny)
                same |= np.isfinite(x) & np.isfinite(y) & (np.abs(x - y) <= tol)
    else:
        same = a == b.astype(a.dtype)
    bad = np.argwhere(~np.asarray(same))
    if len(bad) == 0:
        return None
    at = tuple(int(i) for i in bad[0])
    return f"at {list(at)}: {a[at]!r} and {b[at]!r}"


def _has_nan(node):
    return any(a is not None and str(a.dtype) in FLOATS and np.isnan(a).any() for _, a in node.inputs)


def _has_inf(node):
    return any(a is not None and str(a.dtype) in FLOATS and np.isinf(a).any() for _, a in node.inputs)


def _reduces_nothing(node):
    """A reduction with `noop_with_empty_axes` and no axes."""
    return node.attrs.get("noop_with_empty_axes") == 1 and (node.input(1) is None or node.input(1).size == 0)


def _int_data(node):
    a = node.input(0)
    return a is not None and str(a.dtype) not in FLOATS and str(a.dtype) != "bool"


# ONNX Runtime's deviations from ONNX: (name, operators, condition on the
# node, evidence). Where ORT and the reference evaluator disagree and one
# holds, the reference evaluator's result is expected.
DEVIATIONS = [
    (
        "ort-noop-without-axes",
        {"ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
         "ReduceLogSumExp", "ReduceMax", "ReduceMin"},
        lambda node: node.attrs.get("noop_with_empty_axes") == 1
        and (node.input(1) is None or node.input(1).size == 0),
        "ONNX's reduction text: 'noop_with_empty_axes: ... When axes is empty and this attribute "
        "is set to true, input tensor will not be reduced' (an absent axes input is empty); "
        "ONNX's shape inference keeps the input's shape; onnx.reference returns the input; "
        "ONNX Runtime reduces every axis",
    ),
    (
        "ort-argminmax-skips-nan",
        {"ArgMax", "ArgMin"},
        _has_nan,
        "onnx.reference (numpy argmax/argmin: the first NaN of a row is its extreme); "
        "ONNX Runtime's CPU kernel compares with < and > and never selects a NaN",
    ),
    (
        "ort-reduce-minmax-skips-nan",
        {"ReduceMax", "ReduceMin", "Max", "Min"},
        _has_nan,
        "onnx.reference (numpy maximum/minimum propagate NaN); ONNX's ReduceMax-20 text: "
        "'If the input data type is Boolean ... ' and the function body's Max/Min propagate NaN; "
        "ONNX Runtime's Eigen maxCoeff/minCoeff skip NaN",
    ),
    (
        "ort-integer-sum-saturates",
        {"ReduceSum", "ReduceSumSquare", "ReduceProd", "ReduceL1", "Sum"},
        _int_data,
        "onnx.reference (numpy integer arithmetic wraps modulo 2^bits, as ONNX's integer Add does); "
        "ONNX Runtime's integer reductions saturate or accumulate in a wider type",
    ),
    (
        "ort-cast-double-rounds-float16",
        {"Cast"},
        lambda node: str(node.input(0).dtype) == "float64" and node.attrs.get("to") == "float16",
        "ONNX Cast-19 text ('rounding to nearest, ties to even'); onnx.reference (numpy's "
        "float64->float16 rounds once); ONNX Runtime rounds through float32 first",
    ),
]


def _subnormal(dtype):
    def cond(node):
        a = node.input(0)
        if str(a.dtype) != dtype:
            return False
        tiny = np.finfo(a.dtype).tiny
        return bool(((a != 0) & (np.abs(a) < tiny)).any())

    return cond


DEVIATIONS += [
    (
        "ort-sign-nan-is-zero",
        {"Sign"},
        _has_nan,
        "ONNX Sign-13 text is silent on NaN (it defines > 0, < 0 and == 0); onnx.reference (numpy sign) "
        "gives NaN, as IEEE 754 propagates NaN, and so do ops; ONNX Runtime gives 0",
    ),
    (
        "ort-integer-fmod-through-double",
        {"Mod"},
        lambda node: node.attrs.get("fmod") == 1 and str(node.input(0).dtype) in ("int64", "uint64"),
        "ONNX Mod-13 text (fmod: the remainder has the dividend's sign, exact for integers); "
        "onnx.reference (numpy fmod on int64); ONNX Runtime computes a 64-bit integer fmod in double",
    ),
    (
        "ort-sqrt-infinity",
        {"Sqrt"},
        lambda node: str(node.input(0).dtype) in FLOATS and bool(np.isposinf(node.input(0)).any()),
        "ONNX Sqrt-13 text ('If x is negative, then it will return NaN'; sqrt(+inf) is +inf by IEEE 754); "
        "onnx.reference (numpy sqrt); ONNX Runtime's Sqrt returns NaN for +inf",
    ),
    (
        "ort-log-float64-subnormal",
        {"Log"},
        _subnormal("float64"),
        "ONNX Log-13 text (natural log); onnx.reference (numpy log: log(4.9e-324) = -744.44); ONNX Runtime's "
        "float64 Log returns log of the smallest normal (-708.40) for subnormal inputs",
    ),
]


def _scatter_nan_extreme(node):
    """A ScatterElements or ScatterND with reduction max or min whose data
    or updates hold a NaN."""
    if node.attrs.get("reduction") not in ("max", "min"):
        return False
    return _has_nan(node)


def _scatter_with(node):
    """The scatter of `node` with numpy's `maximum.at`/`minimum.at`, which
    apply the reduction once per index in order and propagate NaN as
    ONNX's Max and Min do."""
    data, indices, updates = node.input(0), node.input(1), node.input(2)
    ufunc = np.maximum if node.attrs["reduction"] == "max" else np.minimum
    out = data.copy()
    indices = indices.astype(np.int64)
    if node.op == "ScatterND":
        k = indices.shape[-1]
        idx = tuple(np.where(indices[..., j] < 0, indices[..., j] + data.shape[j], indices[..., j]) for j in range(k))
    else:
        axis = node.attrs.get("axis", 0) % data.ndim
        grid = list(np.indices(indices.shape, sparse=True))
        grid[axis] = np.where(indices < 0, indices + data.shape[axis], indices)
        idx = tuple(grid)
    ufunc.at(out, idx, updates)
    return [out]


def _mean_axes(node):
    """The axes a ReduceMean node reduces (None: it returns its input)."""
    a = node.input(0)
    given = node.input(1)
    axes = [] if given is None else [int(x) for x in np.asarray(given).ravel()]
    if not axes:
        if node.attrs.get("noop_with_empty_axes") == 1:
            return None
        return tuple(range(a.ndim))
    return tuple(sorted(x % a.ndim for x in axes))


def _integer_mean(node):
    """An integer ReduceMean over at least one element an output."""
    if not _int_data(node):
        return False
    a, axes = node.input(0), _mean_axes(node)
    return axes is None or (a.size > 0 and all(a.shape[x] > 0 for x in axes))


def _exact_mean(node):
    """ReduceMean of integers as ops' spec computes it: the sum wraps in
    the element type, the division by the count truncates toward zero."""
    a, axes = np.asarray(node.input(0)), _mean_axes(node)
    if axes is None:
        return [a.copy()]
    keep = node.attrs.get("keepdims", 1) == 1
    n = int(np.prod([a.shape[x] for x in axes], dtype=np.int64))
    with np.errstate(all="ignore"):
        sums = np.sum(a, axis=axes, keepdims=keep, dtype=a.dtype)
    bits = a.dtype.itemsize * 8
    signed = np.issubdtype(a.dtype, np.signedinteger)

    def mean(v):
        q = abs(int(v)) // n * (1 if v >= 0 else -1)
        q &= (1 << bits) - 1
        return q - (1 << bits) if signed and q >= 1 << (bits - 1) else q

    out = np.array([mean(v) for v in np.asarray(sums).ravel()], dtype=object)
    return [out.astype(a.dtype).reshape(np.shape(sums))]


# Where ONNX Runtime, and the reference evaluator with it or not, depart
# from ONNX's text: (name, operators, condition, evidence, the expected
# outputs of the node from numpy). Checked before the reference evaluator
# is asked; a node whose ONNX Runtime outputs agree is no deviation.
NUMPY_ORACLE = [
    (
        "ort-scatter-extreme-skips-nan",
        {"ScatterElements", "ScatterND"},
        _scatter_nan_extreme,
        "ONNX ScatterElements-18/ScatterND-18 text: reduction 'max: reduction using the maximum operation' "
        "(ONNX's Max propagates NaN, see ort-reduce-minmax-skips-nan); numpy maximum.at/minimum.at on the "
        "same indices propagate it; ONNX Runtime skips NaN, and onnx.reference's Python max/min give NaN "
        "or not by the order of their operands",
        _scatter_with,
    ),
    (
        "ort-integer-mean-through-double",
        {"ReduceMean"},
        _integer_mean,
        "ONNX ReduceMean-18 text ('the mean of the input tensor's elements'; silent on integer rounding); "
        "ops' spec sums in the element type, wrapping as ONNX's integer Add does, and truncates as its "
        "integer Div does, which is exact for 64-bit values; ONNX Runtime and onnx.reference (numpy mean) "
        "compute in double, losing the low bits of 64-bit values past 2^53 and not wrapping 32-bit sums",
        _exact_mean,
    ),
]


# Where ONNX Runtime and ONNX's function body of the operator
# (`run_function_body`) disagree on which elements are NaN: (name,
# operators, condition on the node, evidence). Those elements are expected
# from the function body, the others from ONNX Runtime (whose shifted
# log-sum-exp stays finite where the body's `exp` in double overflows).
BODY_NANS = [
    (
        "ort-log-sum-exp-infinity",
        {"ReduceLogSumExp"},
        lambda node: (_has_inf(node) or _has_nan(node)) and not _reduces_nothing(node),
        "ONNX ReduceLogSumExp-18's function body (Cast to double, Exp, ReduceSum, Log, CastLike): elements "
        "with a NaN give NaN, else with a +infinity +infinity, all -infinity -infinity; ONNX Runtime 1.32 "
        "takes a maximum that skips a NaN after a +infinity and gives +infinity for [+inf, NaN] (NaN for "
        "[NaN, +inf]); 1.20.1, reducing over every axis, gave NaN for a +infinity or all -infinity",
    ),
]


def _from_body(node, got):
    """ONNX Runtime's outputs `got` with the function body's values where
    the two disagree on NaN (per `BODY_NANS`), the deviation's name and a
    note; None when no element changes."""
    found = deviation(node, BODY_NANS)
    if not found:
        return None
    name, evidence = found
    body = run_function_body(node)
    out, where = [], None
    for i, (g, b) in enumerate(zip(got, body)):
        g, b = np.asarray(g), np.asarray(b)
        if g.shape != b.shape or str(g.dtype) not in FLOATS:
            out.append(g)
            continue
        b = b.astype(g.dtype)
        fix = np.isnan(g) != np.isnan(b)
        if fix.any() and where is None:
            at = tuple(int(k) for k in np.argwhere(fix)[0])
            where = f"{node.outputs[i]} at {list(at)}: {g[at]!r} and {b[at]!r}"
        out.append(np.where(fix, b, g))
    if where is None:
        return None
    note = f"ONNX Runtime deviates from ONNX ({name}): {where} (onnxruntime, function body); evidence: {evidence}"
    return out, name, note


# Where the reference evaluator, not ONNX Runtime, departs from ONNX's
# text: (name, operators, condition, evidence). ONNX Runtime's result is
# expected.
REFERENCE_ERRORS = [
    (
        "reference-integer-mean-through-double",
        {"ReduceMean", "Mean"},
        _int_data,
        "ONNX's ReduceMean/Mean text (the mean of the elements, in the input type); onnx.reference "
        "computes numpy's float64 mean and casts back, losing 64-bit integers above 2^53",
    ),
    (
        "reference-clip-absent-bound",
        {"Clip"},
        lambda node: len(node.inputs) < 3 or node.inputs[1][1] is None,
        "ONNX Clip-13 text: 'They default to numeric_limits::lowest() and numeric_limits::max(), "
        "respectively' (an infinite input is clipped to the largest finite value); onnx.reference "
        "leaves it infinite",
    ),
    (
        "reference-log-sum-exp-infinite-max",
        {"ReduceLogSumExp"},
        lambda node: _has_inf(node) or _has_nan(node),
        "ONNX ReduceLogSumExp-18's function body (Cast to double, Exp, ReduceSum, Log, CastLike): elements "
        "all infinite give +infinity with a +infinity among them, -infinity otherwise; onnx.reference shifts "
        "by the maximum of the finite elements, -infinity when there is none, and gives NaN (inf - inf)",
    ),
    (
        "reference-onehot-out-of-range",
        {"OneHot"},
        lambda node: bool(
            ((node.input(0) < -node.input(1).reshape(-1)[0]) | (node.input(0) >= node.input(1).reshape(-1)[0])).any()
        ),
        "ONNX OneHot-11 text: 'Any entries in the indices input tensor with values outside the range "
        "[-depth, depth-1] will result in one-hot representation with all off_value values'; "
        "onnx.reference wraps them instead",
    ),
]


# Nodes ONNX Runtime refuses to run though ONNX defines them: (name,
# condition on the node, evidence). The reference evaluator's result is
# expected.
REFUSALS = [
    (
        "ort-rejects-rank-0-pad",
        lambda node: node.op == "Pad" and node.input(0).ndim == 0,
        "ONNX Pad-21 text (pads has 2 * num_axes values, none for a scalar: the output is the input); "
        "onnx.reference returned the input with numpy 1.26 (with numpy 2.4 its np.pad fails on the "
        "empty pad widths); ONNX Runtime fails 'Input tensor has no dimensions'",
    ),
    (
        "ort-rejects-noop-without-axes",
        lambda node: node.op.startswith("Reduce")
        and node.attrs.get("noop_with_empty_axes") == 1
        and node.input(1) is None,
        "ONNX's reduction text: 'noop_with_empty_axes: ... When axes is empty and this attribute "
        "is set to true, input tensor will not be reduced' (an absent axes input is empty); "
        "onnx.reference returns the input; ONNX Runtime fails 'Reduction on all axes, output size "
        "should be 1'",
    ),
    (
        "ort-rejects-empty-reduction",
        lambda node: node.op in {"ReduceMax", "ReduceMin", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd"}
        and node.input(0).size == 0,
        "ONNX ReduceMax-20 text: 'Reduction over an empty set of values yields minus infinity (if "
        "supported by the datatype) or the minimum value of the data type otherwise' (and likewise "
        "for the others); onnx.reference",
    ),
]


# Nodes ONNX Runtime crashes on (the process dies): not run on it, the
# reference evaluator's result is expected. (name, condition, evidence).
CRASHES = [
    # None with the pinned ONNX Runtime: 1.20.1 died with SIGSEGV on a UINT8
    # ReduceMin of shape [8, 4, 0] over every axis; 1.32.0 gives 255.
]


def deviation(node, table):
    """The listed deviation that may explain a disagreement on `node`."""
    for entry in table:
        name, cond, evidence = entry[0], entry[-2], entry[-1]
        ops = entry[1] if len(entry) == 4 else None
        if (ops is None or node.op in ops) and cond(node):
            return name, evidence
    return None


class Answer:
    """What the oracles expect of a node: `outputs` (arrays), `source`
    (which oracle), `note` (the deviation and its evidence, or the
    disagreement left unexplained), `deviation` (its name), `disputed`."""

    def __init__(self, outputs, source, note=None, deviation=None, disputed=False):
        self.outputs = outputs
        self.source = source
        self.note = note
        self.deviation = deviation
        self.disputed = disputed


def _like(ref, got):
    """The reference evaluator's outputs in ONNX Runtime's types (numpy
    may widen a type)."""
    out = []
    for r, g in zip(ref, got):
        r = np.asarray(r)
        out.append(r.astype(g.dtype) if g is not None else r)
    return out


def answer(node, exact):
    """Runs `node` on both oracles and decides what is expected."""
    m = model(node)
    source = "onnxruntime"
    found = deviation(node, CRASHES)
    if found:
        name, evidence = found
        return Answer(
            [np.asarray(r) for r in run_reference(m, node)],
            "onnx reference evaluator",
            note=f"ONNX Runtime deviates from ONNX ({name}): not run on onnxruntime; evidence: {evidence}",
            deviation=name,
        )
    try:
        got = run_ort(m, node)
        for to in ("float64", "float32") if node.op in ACCUMULATING else ():
            wide, narrow = widen(node, to)
            if wide is None:
                continue
            try:
                got = _narrow(run_ort(model(wide), wide), narrow, to)
                source = f"onnxruntime on {to} inputs, rounded to {narrow}"
                break
            except (Unsupported, Rejected):
                pass
    except Rejected as e:
        found = deviation(node, REFUSALS)
        if not found:
            raise
        name, evidence = found
        if name == "ort-rejects-rank-0-pad":
            # onnx.reference 1.23.2's np.pad refuses the empty pad widths
            # of a scalar under numpy 2.4; there is nothing to pad.
            ref = [np.asarray(node.input(0)).copy()]
        else:
            ref = run_reference(m, node)
        types = [np.asarray(r).dtype for r in ref]
        return Answer(
            [np.asarray(r).astype(t) for r, t in zip(ref, types)],
            "onnx reference evaluator",
            note=f"ONNX Runtime deviates from ONNX ({name}): onnxruntime fails: {e}; evidence: {evidence}",
            deviation=name,
        )
    precise = source.startswith("onnxruntime on float64")
    patched = _from_body(node, got)
    if patched:
        got, body_deviation, body_note = patched
        source = f"{source}, ONNX's function body where onnxruntime gives NaN"

    def ort_answer(note=None):
        """ONNX Runtime's (patched) outputs as the expected values."""
        if not patched:
            return Answer(got, source, note=note)
        return Answer(got, source, note="; ".join(n for n in (body_note, note) if n), deviation=body_deviation)

    if node.op in ACCUMULATING and not precise:
        wide = run_reference_wide(node)
        if wide is not None:
            where = first_output_difference(node, got, wide, exact)
            if where is not None:
                return Answer(
                    wide,
                    "onnx reference evaluator on float64 inputs",
                    note=f"ONNX Runtime accumulates in the input type (ort-narrow-accumulation): {where} "
                    "(onnxruntime, reference on float64 inputs); evidence: onnx.reference on float64 copies "
                    "of the inputs, rounded once; ONNX Runtime has no float64 kernel to check it with",
                    deviation="ort-narrow-accumulation",
                )
    for name, ops, cond, evidence, expect in NUMPY_ORACLE:
        if node.op in ops and cond(node):
            want = _like(expect(node), got)
            where = first_output_difference(node, got, want, exact)
            if where is not None:
                return Answer(
                    want,
                    "numpy",
                    note=f"ONNX Runtime deviates from ONNX ({name}): {where} (onnxruntime, numpy); "
                    f"evidence: {evidence}",
                    deviation=name,
                )
    try:
        ref = run_reference(m, node)
    except Exception as e:  # noqa: BLE001 (the evaluator raises anything)
        return ort_answer(f"onnx reference evaluator failed or was not run: {str(e)[:200]}")
    where = first_output_difference(node, got, ref, exact)
    if where is None:
        return ort_answer()
    inferred = inferred_shapes(m, node)
    if inferred and all(
        s is None or list(g.shape) == s for g, s in zip(got, inferred)
    ) and any(s is not None and list(np.asarray(r).shape) != s for r, s in zip(ref, inferred)):
        return ort_answer(f"the onnx reference evaluator's output shape contradicts ONNX's shape inference: {where}")
    if inferred and all(
        s is None or list(np.asarray(r).shape) == s for r, s in zip(ref, inferred)
    ) and any(s is not None and list(g.shape) != s for g, s in zip(got, inferred)):
        return Answer(
            _like(ref, got),
            "onnx reference evaluator",
            note=f"ONNX Runtime deviates from ONNX (ort-output-shape): {where} (onnxruntime, reference); "
            "evidence: ONNX's shape inference gives the reference evaluator's shape",
            deviation="ort-output-shape",
        )
    wide = run_reference_wide(node)
    if wide is not None and not any(first_difference(a, b, exact) for a, b in zip(got, wide)):
        return ort_answer(
            f"the onnx reference evaluator computes in the input type: {where}; "
            "on float64 inputs it agrees with onnxruntime"
        )
    found = deviation(node, REFERENCE_ERRORS)
    if found:
        name, evidence = found
        return ort_answer(f"the onnx reference evaluator departs from ONNX ({name}): {where}; evidence: {evidence}")
    if not exact and wide is not None and only_finite_differences(got, wide, exact):
        return Answer(
            wide,
            "onnx reference evaluator on float64 inputs",
            note=f"ONNX Runtime is less accurate than ops' contract (ort-inaccurate): {where} "
            "(onnxruntime, reference); evidence: onnx.reference on float64 copies of the inputs, rounded once",
            deviation="ort-inaccurate",
        )
    float_inputs = [str(t.dtype) for _, t in node.inputs if t is not None and str(t.dtype) in FLOATS]
    if (
        not exact
        and float_inputs
        and set(float_inputs) == {"float64"}
        and only_finite_differences(got, ref, exact)
    ):
        return Answer(
            _like(ref, got),
            "onnx reference evaluator",
            note=f"ONNX Runtime is less accurate than ops' contract (ort-inaccurate): {where} "
            "(onnxruntime, reference); evidence: onnx.reference computes FLOAT64 in float64",
            deviation="ort-inaccurate",
        )
    found = deviation(node, DEVIATIONS)
    if found:
        name, evidence = found
        return Answer(
            _like(ref, got),
            "onnx reference evaluator",
            note=f"ONNX Runtime deviates from ONNX ({name}): {where} (onnxruntime, reference); "
            f"evidence: {evidence}",
            deviation=name,
        )
    ans = ort_answer(f"onnxruntime and the onnx reference evaluator disagree, unexplained: {where} (onnxruntime, reference)")
    ans.disputed = True
    return ans


VERSIONS = f"onnxruntime {ort.__version__}, onnx {onnx.__version__}, numpy {np.__version__}"
