"""Known defects of ops that the differential test finds, each owned by a
branch that fixes it. A campaign leaves out the draws a defect matches
(`--include-known` keeps them and counts their failures apart), so the
test command passes while a fix is under way; remove an entry when its fix
lands, and the campaign checks the draws again."""

import numpy as np

from .values import FLOATS


def _floats(node):
    return [a for _, a in node.inputs if a is not None and str(a.dtype) in FLOATS]


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


def _prod_overflows(node):
    """ReduceProd terms whose product may leave float32's range while a
    zero or a small term brings the float64 product back."""
    a = node.input(0)
    with np.errstate(all="ignore"):
        m = np.abs(a[np.isfinite(a)].astype(np.float64))
    return float(np.log2(m[m > 1]).sum()) > 127


# (defect, owner, predicate on the node, what fails).
KNOWN = [
    (
        "float-accumulation",
        "unassigned (found by onnx-diff)",
        lambda n: n.op in _ACCUMULATING
        and _float_data(n)
        and (_near_overflow(n) or n.op == "ReduceProd" and _prod_overflows(n)),
        "float reductions and Sum/Mean whose partial sums, squares or products leave float32's range: "
        "the specs accumulate in float32 (FLOAT64 in FLOAT64) and give infinity, or NaN for infinity "
        "times 0, where ONNX Runtime on float64 copies stays finite (ReduceProd of 210 FLOAT16 terms "
        "of magnitude up to 8 with a 0 among them: NaN, not 0)",
    ),
]


def known_defect(node):
    """The first known defect whose draws include `node`, as `(defect, owner)`."""
    for name, owner, matches, _ in KNOWN:
        if matches(node):
            return name, owner
    return None
