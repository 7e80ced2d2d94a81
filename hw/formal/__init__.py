"""Formal verification of the gateware's streams and state (``docs/formal.md``): the
property library, the harness that wraps a component for SymbiYosys, the designs'
invariants, the catalogue of what is proved about each design, and the runner."""

from hw.formal.harness import CHECKS, KINDS, FormalHarness
from hw.formal.properties import stream_ports
from hw.formal.sby import Outcome, prove, ready_to_valid_paths

__all__ = ["CHECKS", "KINDS", "FormalHarness", "stream_ports", "Outcome", "prove",
           "ready_to_valid_paths"]
