"""Which sources a design is built from, and their digest: what decides whether a
measurement of a design (an Fmax entry, ``hw.flows.fmax_record``) or its Verilog
(``hw.flows.verilog``) is still current."""

import ast
import hashlib
import threading
from pathlib import Path

__all__ = ["PROJECT_ROOT", "design_sources", "design_digest"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
_PROJECT_PACKAGES = ("hw", "sw")
#: CPython 3.11's ``ast.parse`` is not safe in two threads at once ("SystemError: AST
#: constructor recursion depth mismatch", seen when ``sw.experiments.pe_fit --jobs 3``
#: digested the sources in its worker threads): one parse at a time.
_PARSE_LOCK = threading.Lock()


def _gateware_files(root):
    """Every gateware source under ``root/hw``: ``.py`` files outside ``hw/flows`` and the
    formal harnesses ``hw/formal``."""
    return [path for path in sorted((root / "hw").rglob("*.py"))
            if not {"flows", "formal"} & set(path.relative_to(root / "hw").parts)]


def _module_file(root, name):
    """The file of the project's module ``name`` under ``root`` (a module or a package), or None."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imported_modules(path, name):
    """Names of the project's modules (``hw``, ``sw``) the source at ``path`` (module
    ``name``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    with _PARSE_LOCK:
        tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.append(base)
            found += [f"{base}.{alias.name}" for alias in node.names]   # ``from hw import x``
    return [module for module in found if module.split(".")[0] in _PROJECT_PACKAGES]


def design_sources(design, root=None):
    """The gateware files ``design`` (a name of ``hw.designs.DESIGNS``) is built from: the
    module of its component and every project module (``hw``, ``sw``: the generator takes
    its constants from the golden model's) it imports, transitively (static imports), with
    the ``__init__`` of every package on the way (importing a module runs them)."""
    from hw.designs import DESIGNS
    root = Path(root or PROJECT_ROOT)
    pending, seen, files = [DESIGNS[design][0].__module__], set(), set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        pending += [".".join(parts[:end]) for end in range(1, len(parts))]
        path = _module_file(root, name)
        if path is None or {"flows", "formal"} & set(path.relative_to(root).parts):
            continue
        files.add(path)
        pending += _imported_modules(path, name)
    return sorted(files)


def design_digest(root=None, design=None):
    """SHA-1 of gateware sources (path and bytes of each file): those ``design`` is built
    from (:func:`design_sources`), or, without a design, every gateware file (``hw``
    without ``hw/flows`` and ``hw/formal``; the PE fits, ``sw.experiments.pe_fit``, use
    that one). A change to one block then stales the Fmax entries of the designs that
    contain it, not every entry."""
    root = Path(root or PROJECT_ROOT)
    files = _gateware_files(root) if design is None else design_sources(design, root)
    digest = hashlib.sha1()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
