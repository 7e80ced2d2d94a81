"""Several training jobs in one run of the simulated accelerator: ``sim.backend.train_batch``.

The cocotb side of :func:`sim.backend.train_batch`. One simulator start (and one
elaboration of the design) serves every job, which matters for big builds: elaborating a
2,048-row, 64-feature ``ForestSystem`` alone takes a minute or more. Reads a list of jobs
(a pickle named by the testbench setting ``jobs``), each ``{"codes", "labels", "params",
"seed", "n_trees"}``; for each, streams the dataset in, trains through the register map
(:class:`sim.host.driver.HostDriver`) and records, besides the trees and the ``CYCLES`` /
``SORT_CYCLES`` registers, the cycle at which each tree's last node left the ``trees``
stream (sampled every ``watch_cycles`` cycles), so per-tree cycles can be told apart
when the build has one PE. Writes the list of results (a pickle named by ``result``) and,
after each job, a line to the file named by ``progress`` (if any).
"""

import pickle
import time

import cocotb
from cocotb.triggers import ClockCycles

from sim.host.driver import start_host
from sim.runner import testbench_parameters


async def _watch_tree_ends(host, finished, watch_cycles):
    """Append (cycle, trees finished so far) whenever another tree's last node has left."""
    seen = ends = 0
    while True:
        await ClockCycles(host.dut.clk, watch_cycles)
        received = host.trees.received
        for beat in received[seen:]:
            ends += beat["node"]["last"]
        seen = len(received)
        if not finished or finished[-1][1] != ends:
            if ends:
                finished.append((host.cycle_count(), ends))


@cocotb.test()
async def run_jobs(dut):
    settings = testbench_parameters()
    with open(settings["jobs"], "rb") as file:
        jobs = pickle.load(file)
    watch_cycles = int(settings.get("watch_cycles", 16))
    host, capacity = await start_host(dut, settings["design"])
    results = []
    for job in jobs:
        wall = time.perf_counter()
        await host.load_dataset(job["codes"], job["labels"])
        finished = []
        host.trees.clear()
        watcher = cocotb.start_soon(_watch_tree_ends(host, finished, watch_cycles))
        started = host.cycle_count()
        trees, cycles, sort_cycles = await host.train(job["params"], job["seed"], job["n_trees"])
        watcher.cancel()
        results.append({"capacity": capacity, "trees": trees, "train_cycles": cycles,
                        "sort_cycles": sort_cycles, "started_cycle": started,
                        "tree_end_cycles": finished, "watch_cycles": watch_cycles,
                        "wall_seconds": time.perf_counter() - wall})
        if settings.get("progress"):
            with open(settings["progress"], "a") as file:
                file.write(f"{len(results)}\n")
    with open(settings["result"], "wb") as file:
        pickle.dump(results, file)
