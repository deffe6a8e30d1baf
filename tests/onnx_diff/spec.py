"""The support tables of `specs/onnx/*.op`: which data types and ranks ops
accepts for each tensor of each ONNX operator."""

import re
from dataclasses import dataclass, field
from pathlib import Path

# Spec data-type names to case-file names.
DTYPES = {
    "FLOAT64": "float64",
    "FLOAT32": "float32",
    "FLOAT16": "float16",
    "INT64": "int64",
    "INT32": "int32",
    "INT16": "int16",
    "INT8": "int8",
    "UINT64": "uint64",
    "UINT32": "uint32",
    "UINT16": "uint16",
    "UINT8": "uint8",
    "BOOL": "bool",
}

_RANKS = re.compile(r"ranks\s+(\d+)(?:\.\.=(\d+))?")
_LINE = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*:\s*([A-Z0-9 ]+?)\s*(ranks\s+\d+\.\.=\d+)?\s*;\s*$")
_SOURCE = re.compile(r'^\s*source\s+"ONNX\s+(\w+)-(\d+)')
_OPERATOR = re.compile(r"^operator\s+(\w+)")


@dataclass
class TensorSupport:
    """The data types and ranks one tensor accepts."""

    dtypes: list
    ranks: tuple


@dataclass
class OpSupport:
    """One operator's spec: its name, the ONNX version it follows, and its
    support tables: `(when, tensors)` pairs, `when` the set of values of
    the table's `when ATTR in [...]` (None for every value), `tensors` a
    dict by tensor name."""

    name: str
    version: int
    tables: list = field(default_factory=list)
    # Whether every accuracy contract of the spec is `exact` (data
    # movement has none: exact).
    exact: bool = True

    def _table(self, when):
        for values, tensors in self.tables:
            if values is None or when is None or when in values:
                return tensors
        raise KeyError(f"{self.name}: no support table for {when}")

    def dtypes(self, tensor, when=None):
        return self._table(when)[tensor].dtypes

    def ranks(self, tensor, when=None):
        return self._table(when)[tensor].ranks


def parse_spec(text):
    """Reads the operator name, ONNX version and support table of one spec."""
    name, version = None, None
    tables, when = [], None
    in_support, ranks = False, (0, 8)
    for line in text.splitlines():
        if name is None and (m := _OPERATOR.match(line)):
            name = m.group(1)
        if version is None and (m := _SOURCE.match(line)):
            version = int(m.group(2))
        stripped = line.strip()
        if stripped.startswith("support {"):
            in_support = True
            continue
        if not in_support:
            continue
        if stripped.startswith("when ") and stripped.endswith("{"):
            inside = stripped[stripped.index("[") + 1 : stripped.index("]")]
            when = {v.strip().lower() for v in inside.split(",")}
        elif stripped.startswith(("ranks", "level")) and stripped.endswith("{"):
            # A DirectML table (`level 5.1 ranks 1..=8 {`) comes first at
            # its highest feature level.
            m = _RANKS.search(stripped)
            ranks = (int(m.group(1)), int(m.group(2) or m.group(1)))
            tensors = {}
            tables.append((when, tensors))
        elif m := _LINE.match(line):
            own = _RANKS.search(m.group(3) or "")
            tensors[m.group(1)] = TensorSupport(
                [DTYPES[d] for d in m.group(2).split()],
                (int(own.group(1)), int(own.group(2) or own.group(1))) if own else ranks,
            )
        elif line.rstrip() == "    }":
            in_support = False
    exact = all(
        line.split(":", 1)[1].strip() == "exact" for line in text.splitlines() if line.strip().startswith("accuracy:")
    )
    return OpSupport(name, version or 0, tables, exact)


def load(root):
    """Every operator of `specs/onnx` under the repository `root`, by name."""
    out = {}
    for path in sorted(Path(root, "specs", "onnx").glob("*.op")):
        spec = parse_spec(path.read_text())
        if spec.name:
            out[spec.name] = spec
    return out
