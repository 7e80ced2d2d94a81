"""The project's layout rules (docs/architecture.md), checked on the source tree.

Layers, from the bottom: the golden model and data (``sw.methods``, ``sw.data``), the
gateware (``hw``), its EDA flows (``hw.flows``), the simulation (``sim``), and the
experiments (``sw.experiments``), which alone write ``results/`` with the flows' reports.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("hw", "sim", "sw")
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 150

#: (rule, modules the rule is about, modules among those it is not about, imports they must
#: not make, allowed exceptions as (importing module or "*", imported module) pairs).
RULES = [
    ("methods and data never import experiments, simulation or gateware",
     ("sw.methods", "sw.data"), (), ("sw.experiments", "sim", "hw"),
     {("sw.methods.forest.estimator", "sim.backend"), ("sw.methods.forest.estimator", "sim.histogram_backend")}),
    ("gateware never imports its flows, the simulation or the experiments",
     ("hw",), ("hw.flows",), ("hw.flows", "sim", "sw.experiments"), set()),
    ("flows never import the simulation or the host library",
     ("hw.flows",), (), ("sim", "sw"), {("hw.flows.resources", "sw.experiments.thesis_tables")}),
    ("the simulation never imports the experiments",
     ("sim",), (), ("sw.experiments",), set()),
    ("experiments reach the simulation only through sim.backend (or sim.histogram_backend)",
     ("sw.experiments",), (), ("sim",), {("*", "sim.backend"), ("*", "sim.histogram_backend")}),
]


def _module_name(path, root):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path, module):
    """Every module ``path`` imports (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:    # ``from sim import backend`` is sim.backend
                yield f"{base}.{alias.name}"


def _within(name, prefixes):
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def layer_violations(root):
    """(rule, module, imported) for every import that breaks a rule under ``root``."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            module = _module_name(path, root)
            imported = set(_imports(path, module))
            for rule, subjects, excluded, forbidden, allowed in RULES:
                if not _within(module, subjects) or _within(module, excluded):
                    continue
                for name in sorted(imported):
                    if _within(name, forbidden) and not _allowed(module, name, allowed):
                        found.append((rule, module, name))
    return found


def _allowed(module, name, allowed):
    return any(who in ("*", module) and _within(name, (target,)) for who, target in allowed)


def results_writers(root):
    """Modules outside the experiments and the flows that name the results folder."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            module = _module_name(path, root)
            if _within(module, ("sw.experiments", "hw.flows")):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                # "results/..." anywhere, or a path joined as ``root / "results"``
                if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and node.value.startswith("results/")):
                    found.append((module, node.value))
                if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
                        and isinstance(node.right, ast.Constant) and node.right.value == "results"):
                    found.append((module, "results"))
    return found


def oversized(root):
    """Files over the line limit and functions over theirs (docstring excluded)."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text()
            if len(text.splitlines()) > MAX_FILE_LINES:
                found.append(f"{path.relative_to(root)}: {len(text.splitlines())} lines")
            for node in ast.walk(ast.parse(text)):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                length = node.end_lineno - node.lineno + 1
                first = node.body[0]
                if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str)):
                    length -= first.end_lineno - first.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name}: {length} lines")
    return found


def test_layer_rules_hold():
    assert layer_violations(ROOT) == []


def test_only_experiments_and_flows_name_the_results_folder():
    assert results_writers(ROOT) == []


def test_no_file_or_function_over_the_size_limits():
    assert oversized(ROOT) == []


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for package in PACKAGES:
        (tmp_path / package).mkdir(exist_ok=True)
    return tmp_path


@pytest.mark.parametrize("module,line,rule", [
    ("sw/methods/forest/model.py", "from sw.experiments import compare\n", "methods and data"),
    ("sw/methods/metric/estimator.py", "from sim import backend\n", "methods and data"),
    ("sw/data/datasets.py", "import hw.pe\n", "methods and data"),
    ("hw/gini.py", "from hw.flows.verilog import write_verilog\n", "gateware never"),
    ("hw/pe/controller.py", "from ..flows import fmax\n", "gateware never"),
    ("hw/flows/fmax.py", "from sim.runner import simulate\n", "flows never"),
    ("sim/tb_pe.py", "import sw.experiments.compare\n", "the simulation never"),
    ("sw/experiments/bench.py", "from sim.runner import simulate\n", "experiments reach"),
])
def test_a_forbidden_import_is_caught(tmp_path, module, line, rule):
    root = _tree(tmp_path, {module: line})
    violations = layer_violations(root)
    assert len(violations) == 1 and violations[0][0].startswith(rule), violations


@pytest.mark.parametrize("module,line", [
    ("sw/methods/forest/estimator.py", "from sim import backend\n"),
    ("sw/experiments/compare/run.py", "from sim import backend\n"),
    ("sw/experiments/pe_fit.py", "from sim.backend import BUILD_ROOT\n"),
    ("hw/rng.py", "from sw.methods.forest.rng import WORD_BITS\n"),
    ("hw/flows/verilog.py", "from hw.designs import DESIGNS\n"),
    ("sim/tb_pe.py", "from sw.methods.forest.model import train_tree\n"),
])
def test_allowed_imports_pass(tmp_path, module, line):
    assert layer_violations(_tree(tmp_path, {module: line})) == []


def test_a_results_path_outside_the_experiments_is_caught(tmp_path):
    root = _tree(tmp_path, {"sim/runner.py": 'OUT = "results/sim.md"\n',
                            "sim/backend.py": 'OUT = ROOT / "results"\n',
                            "hw/lane.py": 'PORTS = {"results": 1}\n',
                            "sw/experiments/bench.py": 'OUT = "results/bench.md"\n'})
    assert results_writers(root) == [("sim.backend", "results"), ("sim.runner", "results/sim.md")]


def test_an_oversized_function_is_caught(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    root = _tree(tmp_path, {"hw/big.py": f'def f():\n    """Doc."""\n{body}'})
    assert oversized(root) == ["hw/big.py:1 f: 151 lines"]
