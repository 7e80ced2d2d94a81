"""Several training jobs in one run of the simulated accelerator: ``sim.backend.train_batch``.

The cocotb side of :func:`sim.backend.train_batch`. One simulator start (and one
elaboration of the design) serves every job, which matters for big builds: elaborating a
2,048-row, 64-feature ``ForestSystem`` alone takes a minute or more. Reads a list of jobs
(a pickle named by the testbench setting ``jobs``), each ``{"codes", "labels", "params",
"seed", "n_trees"}``; for each, streams the dataset in, trains through the register map
(:class:`sim.host.driver.HostDriver`) and records, besides the trees and the ``CYCLES`` /
``SORT_CYCLES`` registers:

* ``tree_end_cycles``: (cycle, trees finished) at the edge that registered each tree's
  last node on the ``trees`` stream, exactly (from the sink's per-transfer cycles), so
  per-tree cycles can be told apart when the build has one PE (``watch_cycles``, the
  sampling period this once had, is kept in the result and samples nothing);
* for the speed figures, the simulated cycles and wall time of the load (``load_cycles``,
  ``load_wall_seconds``) and of the whole job (``session_cycles``, ``wall_seconds``,
  ``cpu_seconds``: the simulator process's CPU time, which other load on the machine
  does not inflate).

Writes the list of results (a pickle named by ``result``) and, after each job, a line to
the file named by ``progress`` (if any).
"""

import pickle
import time

import cocotb

from sim.host.driver import start_host
from sim.runner import testbench_parameters


def _tree_ends(sink):
    """(cycle, trees finished so far) at the edge that registered each tree's last node."""
    finished, ends = [], 0
    for beat, cycle in zip(sink.received, sink.cycles):
        if beat["node"]["last"]:
            ends += 1
            finished.append((cycle + 1, ends))
    return finished


@cocotb.test()
async def run_jobs(dut):
    settings = testbench_parameters()
    with open(settings["jobs"], "rb") as file:
        jobs = pickle.load(file)
    watch_cycles = int(settings.get("watch_cycles", 16))
    host, capacity = await start_host(dut, settings["design"])
    results = []
    for job in jobs:
        wall, cpu, first = time.perf_counter(), time.process_time(), host.cycle_count()
        await host.load_dataset(job["codes"], job["labels"])
        host.trees.clear()
        started, loaded = host.cycle_count(), time.perf_counter()
        trees, cycles, sort_cycles = await host.train(job["params"], job["seed"], job["n_trees"])
        finished = _tree_ends(host.trees)
        results.append({"capacity": capacity, "trees": trees, "train_cycles": cycles,
                        "sort_cycles": sort_cycles, "started_cycle": started,
                        "tree_end_cycles": finished, "watch_cycles": watch_cycles,
                        "wall_seconds": time.perf_counter() - wall, "cpu_seconds": time.process_time() - cpu,
                        "load_cycles": started - first, "load_wall_seconds": loaded - wall,
                        "session_cycles": host.cycle_count() - first})
        if settings.get("progress"):
            with open(settings["progress"], "a") as file:
                file.write(f"{len(results)}\n")
    with open(settings["result"], "wb") as file:
        pickle.dump(results, file)
