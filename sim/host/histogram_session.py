"""A host session on the simulated histogram system: the cocotb side of ``sim.histogram_backend``.

Reads a job (a pickle named by the testbench setting ``job``): ``{"train": {"codes",
"labels", "params", "seed", "n_trees"}}``; runs it through
:class:`sim.host.histogram_driver.HistogramHostDriver` and writes the result (a pickle
named by ``result``): the trees, the cycles and the memory words the codes' reads took. An error the accelerator or the driver
reports goes into the result as ``error`` (message and flags), so that the backend raises
it in the user's process. Progress (the trees done) goes to the file named by
``progress``, as :mod:`sim.host.session` writes it.
"""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles

from sim.host.histogram_driver import HistogramHostDriver
from sim.host.session import load_job, run_and_save
from sim.support.avalon import SIMULATED_DDR4
from sim.support.testbench import CLOCK_IMPL, CLOCK_PERIOD_NS


async def _train(host, job, result, progress):
    train = job["train"]
    await host.load_dataset(train["codes"], train["labels"])
    trees, cycles = await host.train(train["params"], train["seed"], train["n_trees"], progress=progress)
    memory = host.transport.memory_model      # (None: the codes are on the chip)
    result.update(trees=trees, train_cycles=cycles, words_read=0 if memory is None else memory.accepted_reads)


@cocotb.test()
async def run_job(dut):
    settings, job, progress = load_job()
    Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns", impl=CLOCK_IMPL).start()
    # (a build with its codes in memory reads them from the simulated DDR4, never waiting)
    host = HistogramHostDriver(dut, settings["design"], period_ns=CLOCK_PERIOD_NS,
                               memory_latency=SIMULATED_DDR4["memory_latency"])
    for driver in host.drivers:
        cocotb.start_soon(driver.run())
    dut.rst.value = 1
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    result = {"capacity": await host.check_identity()}
    await run_and_save(settings, result, _train(host, job, result, progress))
