"""Known defects of ops that the differential test finds, each owned by a
branch that fixes it. A campaign leaves out the draws a defect matches
(`--include-known` keeps them and counts their failures apart), so the
test command passes while a fix is under way; remove an entry when its fix
lands, and the campaign checks the draws again."""

import numpy as np

from .values import FLOATS


def _floats(node):
    return [a for _, a in node.inputs if a is not None and str(a.dtype) in FLOATS]


def _has(node, test):
    with np.errstate(all="ignore"):
        return any(bool(test(a).any()) for a in _floats(node))


def _neg_zero(a):
    return (a == 0) & np.signbit(a)


def _float_data(node):
    return str(node.input(0).dtype) in FLOATS


_ACCUMULATING = {
    "ReduceSum",
    "ReduceMean",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceSumSquare",
    "ReduceLogSum",
    "Sum",
    "Mean",
}


def _near_overflow(node):
    """Terms whose sum (or, for ReduceL2/ReduceSumSquare/ReduceProd, whose
    squares or products) may overflow float32 accumulators."""
    squares = node.op in {"ReduceL2", "ReduceSumSquare", "ReduceProd"}
    for a in _floats(node):
        with np.errstate(all="ignore"):
            m = np.abs(a[np.isfinite(a)].astype(np.float64))
        if m.size == 0:
            continue
        limit = 1.8e19 if squares else 3.4e38 / 2**17
        if str(a.dtype) == "float16":
            limit = 255.0 if squares else 64.0
        if (m > limit).any():
            return True
    return False


def _inputs(node):
    return sum(1 for _, a in node.inputs if a is not None)


# (defect, owner, predicate on the node, what fails).
KNOWN = [
    (
        "variadic-inputs",
        "cases",
        lambda n: (n.op in {"Max", "Min", "Sum", "Mean"} and _inputs(n) > 4)
        or (n.op == "Concat" and _inputs(n) > 6)
        or (n.op == "Split" and len(n.outputs) > 6),
        "Max/Min/Sum/Mean beyond 4 inputs, Concat beyond 6 inputs, Split beyond 6 outputs",
    ),
    ("pad-wrap", "onnxsem", lambda n: n.op == "Pad" and n.attrs.get("mode") == "wrap", "Pad mode wrap"),
    (
        "clip-absent-bounds",
        "onnxsem",
        lambda n: n.op == "Clip" and (len(n.inputs) < 3 or n.inputs[1][1] is None),
        "Clip with an absent min or max",
    ),
    ("tanh-negative-zero", "onnxsem", lambda n: n.op == "Tanh" and _has(n, _neg_zero), "Tanh(-0)"),
    (
        "reduce-log-sum-exp",
        "onnxsem",
        lambda n: n.op == "ReduceLogSumExp" and _has(n, lambda a: ~np.isfinite(a) | (np.abs(a) > 80)),
        "ReduceLogSumExp of infinities, NaN or large values",
    ),
    (
        "reduce-noop-applies-map",
        "unassigned (found by onnx-diff)",
        lambda n: n.op in {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum"}
        and n.attrs.get("noop_with_empty_axes") == 1
        and (n.input(1) is None or n.input(1).size == 0),
        "ReduceL1/L2/SumSquare/LogSum with noop_with_empty_axes and empty axes give abs/square/log "
        "of the input instead of the input",
    ),
    (
        "pow-exponent-narrowed",
        "unassigned (found by onnx-diff)",
        lambda n: n.op == "Pow"
        and str(n.input(0).dtype) in FLOATS
        and str(n.input(1).dtype) in FLOATS
        and np.finfo(n.input(1).dtype).bits > np.finfo(n.input(0).dtype).bits,
        "Pow of a FLOAT16 base and a wider float exponent: the exponent is rounded to the base's "
        "type first (Pow(-0.2268, 4.9e-37) gives 1, not NaN)",
    ),
    (
        "float-accumulation",
        "accum",
        lambda n: n.op in _ACCUMULATING and _float_data(n) and _near_overflow(n),
        "float reductions and Sum/Mean whose terms or squares overflow the element type when "
        "accumulated in it (the GPU's float32 accumulators give infinity)",
    ),
]


def known_defect(node):
    """The first known defect whose draws include `node`, as `(defect, owner)`."""
    for name, owner, matches, _ in KNOWN:
        if matches(node):
            return name, owner
    return None
