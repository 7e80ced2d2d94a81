"""Where a PE's cycles go: the controller's state in every busy cycle of a tree.

Run by ``python -m sw.experiments.pe_cycles --states`` (which names the states); not part of the
test suite. Per dataset (setting ``datasets``) and mode, ``dataset_trees`` trees are
trained alone, each checked against the golden model by :class:`sim.tb_pe.PETestbench`,
while every clock edge at which the PE is busy counts one cycle for the value of its
state register (``fsm_state``). The report holds, per tree, its cycles and the counts
(the very first tree after the reset also clears the weight tags of every row).
"""

import collections

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from sim.tb_pe import PETestbench
from sim.support.trees import quantised_dataset


@cocotb.test()
async def cycles_by_state(dut):
    tb = PETestbench(dut)
    await tb.begin()
    counts = collections.Counter()
    sampling = [False]

    async def sample():
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if sampling[0] and int(dut.busy.value):
                counts[int(dut.fsm_state.value)] += 1

    cocotb.start_soon(sample())
    for name in tb.settings.get("datasets", []):
        codes, labels, n_classes = quantised_dataset(name, tb.code_bits)
        n_rows, n_features = codes.shape
        for mode in ("forest", "thesis"):
            params = tb.dataset_params(n_rows, n_features, n_classes, mode == "thesis")
            for tree in range(tb.settings.get("dataset_trees", 3)):
                counts.clear()
                sampling[0] = True
                _, ends, _ = await tb.check_sequence(codes, labels, [(params, 4321, tree)],
                                                     f"{name} {mode} tree {tree}")
                sampling[0] = False
                tb.cycle_log.append({"dataset": name, "mode": mode, "cycles": ends[0][1],
                                     "states": dict(counts)})
    tb.write_report()
