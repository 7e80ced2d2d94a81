"""``histogram_top``: the histogram system behind Avalon-MM, for Platform Designer.

:class:`hw.histogram_system.HistogramSystem` behind the wrapper of ``hw.top``
(:class:`hw.top.AvalonTop`): its registers on the Avalon-MM slave ``csr`` (the wrapper's
own at 0x30 .. 0x3F, ``hw.top.TOP_REGISTERS``), the interrupt ``irq``, and two Avalon-MM
masters through which it moves its streams itself: ``mem_read`` reads the dataset
(``READ_START = 1``) from ``READ_BASE``, ``mem_write`` writes the trained trees' node
records (``WRITE_START = 1``) to ``WRITE_BASE``. A separate core clock works as for
``forest_top``. Documented in ``docs/registers.md`` ("The histogram system behind
Avalon-MM").
"""

from hw.histogram_system import HISTOGRAM_REGISTERS, HISTOGRAM_STATUS_BITS, HistogramSystem
from hw.top import TOP_REGISTERS, AvalonTop

__all__ = ["HistogramTop", "HISTOGRAM_READ_TARGETS", "HISTOGRAM_WRITE_TARGETS", "HISTOGRAM_ERROR_BITS"]

#: ``READ_START`` / ``WRITE_START`` values -> stream.
HISTOGRAM_READ_TARGETS = {1: "dataset"}
HISTOGRAM_WRITE_TARGETS = {1: "trees"}
#: ``STATUS`` bits whose rise raises the ``error`` cause of the interrupt.
HISTOGRAM_ERROR_BITS = ("bad_config", "dataset_error", "start_while_busy", "bad_start", "overflow",
                        "value_too_wide")


class HistogramTop(AvalonTop):
    """The histogram system behind Avalon-MM (module docstring). Parameters: as
    :class:`HistogramSystem`, plus the wrapper's (:class:`hw.top.AvalonTop`)."""

    system_class = HistogramSystem
    read_targets, write_targets = HISTOGRAM_READ_TARGETS, HISTOGRAM_WRITE_TARGETS
    status_bits, error_bits = HISTOGRAM_STATUS_BITS, HISTOGRAM_ERROR_BITS


assert not set(TOP_REGISTERS) & set(HISTOGRAM_REGISTERS)
assert not {a for a, *_ in TOP_REGISTERS.values()} & {a for a, *_ in HISTOGRAM_REGISTERS.values()}
