"""Formal verification of the gateware's streams and state (``docs/formal.md``): the
property library, the harness that wraps a component for SymbiYosys, and the runner."""

from hw.formal.harness import CHECKS, FormalHarness
from hw.formal.properties import stream_ports
from hw.formal.sby import Outcome, prove, ready_to_valid_paths

__all__ = ["CHECKS", "FormalHarness", "stream_ports", "Outcome", "prove", "ready_to_valid_paths"]
