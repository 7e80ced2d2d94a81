"""The accelerator's ``STATUS`` flags, their meaning, and the exception that names them.

Imported both inside the simulator (by :mod:`sim.host.driver`) and in the user's process
(by :mod:`sim.backend`, which re-raises an error the session reported): nothing here needs
cocotb. The bit order is the ``STATUS`` register's (``docs/registers.md``).
"""

from hw.system import STATUS_BITS     # STATUS bit i is STATUS_BITS[i] (the gateware owns it)

__all__ = ["STATUS_BITS", "STATUS_MEANINGS", "TRAINING_ERRORS", "INFERENCE_ERRORS",
           "AcceleratorError", "decode_status", "explain"]

#: What each error flag means, in a host program's terms.
STATUS_MEANINGS = {
    "bad_config": "the training configuration is out of range (no rows, features or trees, more "
                  "than the build holds, N_ROWS/N_FEATURES not what was loaded, or a depth limit "
                  "beyond MAX_DEPTH): nothing was started",
    "dataset_error": "the dataset stream was malformed (rows of another length than N_FEATURES, or "
                     "more rows than MAX_ROWS)",
    "start_while_busy": "a start was written while a training ran (ignored)",
    "tree_error": "a tree needed more levels than MAX_DEPTH (with no depth limit set), more nodes "
                  "than a PE holds, or a bootstrap of more distinct rows than a PE's in-bag lists "
                  "hold",
    "inference_bad_config": "the inference engine's configuration is out of range (N_TREES)",
    "bad_node": "a node loaded on trees_in is out of range (index, feature or child)",
    "bad_row": "a test row had another number of features than the stored forest's build",
    "bad_feature": "a stored node names a feature the test row does not have",
    "depth_exceeded": "a traversal went deeper than the build's MAX_DEPTH",
    "value_too_wide": "a configuration register holds more bits than the hardware has: the start "
                      "was refused (never truncated)",
}

#: The flags checked after a training, and after an inference.
TRAINING_ERRORS = ("bad_config", "value_too_wide", "dataset_error", "tree_error")
INFERENCE_ERRORS = ("inference_bad_config", "bad_node", "bad_row", "bad_feature", "depth_exceeded")


class AcceleratorError(RuntimeError):
    """The accelerator reported an error: ``flags`` (the STATUS flags set, by name), the
    message naming them with their meaning, and ``log`` (the simulation log's path, when the
    error comes from ``sim.backend``)."""

    def __init__(self, message, flags=(), log=None):
        super().__init__(message if log is None else f"{message} (simulation log: {log})")
        self.flags, self.log, self.reason = tuple(flags), log, message


def decode_status(word):
    """``{flag: 0 or 1}`` of a STATUS register value."""
    return {name: (word >> bit) & 1 for bit, name in enumerate(STATUS_BITS)}


def explain(status, flags):
    """The flags of ``flags`` set in ``status`` (a decoded STATUS), each as
    ``"STATUS.<flag> (<meaning>)"``; empty when none is set."""
    return [f"STATUS.{flag} ({STATUS_MEANINGS[flag]})" for flag in flags if status.get(flag)]
