"""A differential campaign: draw nodes, let the oracles answer, write ONNX-
shaped case files and their DirectML twins' (`dml.py`), run them with `ops
run` on both backends, and print per operator the cases passed and failed
and ONNX Runtime's deviations, and per DirectML operator its twins."""

import argparse
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from . import dml, known, oracle, spec
from .operators import DRAWERS
from .values import Draw, encode

ROOT = Path(__file__).resolve().parents[2]
# Cases written and run by one `ops run` call.
BATCH = 64
# Draws of one case before its operator counts as having nothing ORT runs.
TRIES = 40
# `PASS name [cpu]...`, or `FAIL dir/name.json: ...` for a case file `ops`
# cannot read.
_LINE = re.compile(r"^(PASS|FAIL|SKIP|ERROR) (?:\S*/)?([^\s/]+?)(?:\.json)?(?: \[(\w+)\]|:)(.*)$")


def case_seed(seed, index):
    """Each case has a seed of its own: one case is redrawn alone."""
    return (seed * 1_000_003 + index) % (1 << 63)


def tensor(name, a):
    a = np.asarray(a)
    return {"name": name, "dtype": str(a.dtype), "shape": list(a.shape), "data": encode(a)}


def case_object(name, node, ans, extra):
    attrs = dict(node.attrs)
    if node.op == "Cast":
        attrs["to"] = int(oracle.ONNX_TYPES[attrs["to"]])
    obj = {
        "name": name,
        "op": node.op,
        "opset": node.opset,
        "attributes": attrs,
        "node_inputs": [n for n, _ in node.inputs],
        "node_outputs": list(node.outputs),
        "inputs": [tensor(n, a) for n, a in node.inputs if a is not None],
        "outputs": [tensor(n, a) for n, a in zip(node.outputs, ans.outputs)],
        "expected_from": f"{ans.source} ({oracle.VERSIONS})",
    }
    if ans.note:
        obj["note"] = ans.note
    obj["onnx_diff"] = extra
    return obj


class Stats:
    def __init__(self):
        self.rows = defaultdict(lambda: defaultdict(int))
        self.deviations = defaultdict(lambda: defaultdict(int))
        self.disputes = defaultdict(list)
        self.failures = []
        # Why DirectML twins were not expressed: {operator: {reason: count}}.
        self.reasons = defaultdict(lambda: defaultdict(int))

    def add(self, op, key, n=1):
        self.rows[op][key] += n


def draw_case(specs, op, seed, index, include_known, unsupported):
    """A node of `op` that ONNX Runtime runs and its answer, or None."""
    s = specs[op]
    for attempt in range(TRIES):
        d = Draw([case_seed(seed, index), attempt])
        node = DRAWERS[op](d, s)
        # What ORT's kernels are registered by: data types and the string
        # attributes (a reduction, a mode).
        key = (op, node.dtypes(), tuple(sorted((k, str(v)) for k, v in node.attrs.items() if isinstance(v, str))))
        if key in unsupported:
            continue
        defect = known.known_defect(node)
        if defect and not include_known:
            continue
        try:
            ans = oracle.answer(node, s.exact)
        except oracle.Unsupported:
            unsupported.add(key)
            continue
        except oracle.Rejected as e:
            return node, None, defect, str(e), attempt
        return node, ans, defect, None, attempt
    return None, None, None, None, TRIES


# The largest case file `ops run` reads (its documented 64 MiB limit):
# a larger draw is counted as skipped, not written.
CASE_FILE_LIMIT = 64 << 20


def prepare(specs, op, args, index, name, path, unsupported, twins):
    """Draws case `index`, asks the oracles and writes its case file, and
    its DirectML twin's beside it when `twins` (the DirectML specs) are
    given: a summary of what happened."""
    node, ans, defect, rejected, _ = draw_case(specs, op, args.seed, index, args.include_known, unsupported)
    out = {"unsupported": unsupported, "defect": defect, "deviation": None, "disputed": False, "note": None}
    if node is None:
        return {**out, "status": "none"}
    if ans is None:
        return {**out, "status": "rejected", "rejected": rejected}
    extra = {"seed": args.seed, "index": index}
    if defect:
        extra["known_defect"] = f"{defect[0]} ({defect[1]})"
    text = json.dumps(case_object(name, node, ans, extra))
    if len(text) > CASE_FILE_LIMIT:
        return {**out, "status": "too large"}
    path.write_text(text)
    twin = dml.twin(twins, node, ans.outputs) if twins else None
    if twin and isinstance(twin[1], dict):
        source = f"{ans.source} ({oracle.VERSIONS})"
        obj = {"name": f"{name}-dml", **twin[1], "expected_from": source, "onnx_diff": extra}
        twin = (twin[0], path.with_name(f"{name}-dml.json"))
        twin[1].write_text(json.dumps(obj))
    out["twin"] = twin
    return {**out, "status": "ok", "deviation": ans.deviation, "disputed": ans.disputed, "note": ans.note}


def isolated(work):
    """`work()` in a child process, so that an oracle that crashes (ONNX
    Runtime has died with SIGSEGV) ends one case, not the campaign: its
    result, or None when the child died."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 0
        try:
            data = pickle.dumps(work())
            with os.fdopen(write, "wb") as f:
                f.write(data)
        except BaseException:  # noqa: BLE001 (reported as a dead child)
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return None
    return pickle.loads(data)


def run_ops(ops_bin, files, backend):
    """`ops run` over `files`: {(case name, backend): (word, detail)}."""
    proc = subprocess.run(
        [str(ops_bin), "run", "--backend", backend, *map(str, files)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_COLOR": "1"},
    )
    out = {}
    for line in proc.stdout.splitlines():
        m = _LINE.match(line)
        if m:
            word, name, step, detail = m.groups()
            prev = out.get(name)
            if prev is None or prev[0] == "PASS":
                out[name] = (word, f"[{step}]{detail}" if step else detail)
    return out, proc


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="onnx-diff",
        description="Differential test of ops' onnx operators against ONNX Runtime",
    )
    p.add_argument("--seed", type=int, default=1, help="campaign seed (default 1)")
    p.add_argument("--cases", type=int, help="cases per operator (default 3 without --time)")
    p.add_argument("--time", type=float, help="run for about this many seconds")
    p.add_argument("--op", action="append", help="only this operator (repeatable, comma lists)")
    p.add_argument("--keep", type=Path, help="copy failing cases (and all cases with --keep-all) here")
    p.add_argument("--keep-all", action="store_true", help="keep every case, not only failing ones")
    p.add_argument("--include-known", action="store_true", help="draw the known ops defects too")
    p.add_argument("--backend", default="all", choices=["cpu", "gpu", "all"])
    p.add_argument("--no-dml", action="store_true", help="leave out the DirectML twins of the draws")
    p.add_argument("--ops", type=Path, default=ROOT / "target" / "release" / "ops", help="the ops binary")
    args = p.parse_args(argv)
    if args.cases is None and args.time is None:
        args.cases = 3
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    specs = spec.load(ROOT)
    ops = sorted(set(specs) & set(DRAWERS))
    missing = sorted(set(specs) - set(DRAWERS))
    if missing:
        print(f"onnx-diff: no drawer for {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.op:
        want = [o for arg in args.op for o in arg.split(",") if o]
        unknown = [o for o in want if o not in specs]
        if unknown:
            print(f"onnx-diff: no ONNX operator {', '.join(unknown)} in the catalog", file=sys.stderr)
            return 2
        ops = sorted(set(want))
    work = Path(tempfile.mkdtemp(prefix="onnx-diff-"))
    stats, twins = Stats(), Stats()
    dml_specs = None if args.no_dml else dml.load(ROOT)
    unsupported = set()
    start = time.monotonic()
    print(f"onnx-diff: seed {args.seed}, {len(ops)} operators, {oracle.VERSIONS}", flush=True)

    def done(i):
        if args.time is not None and time.monotonic() - start >= args.time:
            return True
        return args.cases is not None and i >= args.cases * len(ops)

    index = 0
    while not done(index):
        batch = []
        while len(batch) < BATCH and not done(index):
            op = ops[index % len(ops)]
            name = f"onnx-diff-s{args.seed}-{index:06d}-{op}"
            path = work / f"{name}.json"
            r = isolated(lambda: prepare(specs, op, args, index, name, path, unsupported, dml_specs))
            index += 1
            if r is None:
                stats.add(op, "ORT crashes")
                stats.disputes[op].append(f"{name}: the oracles' process died (seed {args.seed}, case {index - 1})")
                continue
            unsupported |= r["unsupported"]
            if r["status"] == "none":
                stats.add(op, "no ORT kernel")
                continue
            if r["status"] == "too large":
                stats.add(op, "skipped")
                continue
            if r["status"] == "rejected":
                stats.add(op, "ORT rejects")
                stats.disputes[op].append(f"{name}: onnxruntime rejects: {r['rejected']}")
                continue
            defect = r["defect"]
            if r["deviation"]:
                stats.deviations[op][r["deviation"]] += 1
            if r["disputed"]:
                stats.add(op, "disputed")
                stats.disputes[op].append(f"{name}: {r['note']}")
            batch.append((name, op, path, defect, stats))
            if r.get("twin"):
                twin_op, twin = r["twin"]
                if isinstance(twin, str):
                    twins.add(twin_op, "not expressed")
                    twins.reasons[twin_op][twin] += 1
                else:
                    batch.append((twin.stem, twin_op, twin, defect, twins))
        if not batch:
            continue
        results, proc = run_ops(args.ops, [p for _, _, p, _, _ in batch], args.backend)
        for name, op, path, defect, into in batch:
            word, detail = results.get(name, ("ERROR", f": no result from ops run (exit {proc.returncode})"))
            if word == "PASS":
                into.add(op, "passed")
                if defect:
                    into.add(op, "known passed")
                if not args.keep_all:
                    path.unlink()
                continue
            if word == "SKIP":
                into.add(op, "skipped")
                if not args.keep_all:
                    path.unlink()
                continue
            into.add(op, "known" if defect else "failed")
            into.failures.append((op, name, defect, detail.strip(), path))
        elapsed = time.monotonic() - start
        print(f"onnx-diff: {index} cases, {elapsed:.0f} s", file=sys.stderr, flush=True)

    report(stats, twins, ops, args, work)
    failed = sum(row["failed"] for s in (stats, twins) for row in s.rows.values())
    return 1 if failed else 0


def report(stats, twins, ops, args, work):
    cols = ["passed", "failed", "known", "skipped", "disputed", "ORT rejects", "ORT crashes", "no ORT kernel"]
    print(f"{'operator':<18}" + "".join(f"{c:>14}" for c in cols) + "  deviations")
    totals = defaultdict(int)
    for op in ops:
        row = stats.rows[op]
        dev = ", ".join(f"{k} {v}" for k, v in sorted(stats.deviations[op].items()))
        print(f"{op:<18}" + "".join(f"{row[c]:>14}" for c in cols) + (f"  {dev}" if dev else ""))
        for c in cols:
            totals[c] += row[c]
    print(f"{'total':<18}" + "".join(f"{totals[c]:>14}" for c in cols))
    if twins.rows:
        cols = ["passed", "failed", "known", "skipped", "not expressed"]
        print(f"{'DirectML twin':<38}" + "".join(f"{c:>14}" for c in cols) + "  not expressed: why")
        totals = defaultdict(int)
        for op in sorted(twins.rows):
            row = twins.rows[op]
            why = ", ".join(f"{k} {v}" for k, v in sorted(twins.reasons[op].items(), key=lambda kv: -kv[1]))
            print(f"{op:<38}" + "".join(f"{row[c]:>14}" for c in cols) + (f"  {why[:200]}" if why else ""))
            for c in cols:
                totals[c] += row[c]
        print(f"{'total':<38}" + "".join(f"{totals[c]:>14}" for c in cols))
    for op in ops:
        for line in stats.disputes[op][:3]:
            print(f"disputed {line[:400]}")
    keep = args.keep
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    for op, name, defect, detail, path in stats.failures + twins.failures:
        tag = f" (known defect {defect[0]}, {defect[1]})" if defect else ""
        print(f"FAIL {name}{tag} {detail[:300]}")
        if keep and path.exists():
            shutil.copy(path, keep / path.name)
    if keep:
        if args.keep_all:
            for p in work.glob("*.json"):
                shutil.copy(p, keep / p.name)
        print(f"onnx-diff: failing cases kept in {keep} (reproduce: ops run {keep}/*.json)")
    shutil.rmtree(work, ignore_errors=True)
