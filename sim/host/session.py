"""A host session on the simulated accelerator: the cocotb side of ``sim.backend``.

Reads a job (a pickle named by the testbench setting ``job``), runs it through
:class:`sim.host.driver.HostDriver` on the simulated ``ForestSystem``, and writes the result (a
pickle named by ``result``). A job is a dict with any of:

* ``train``: ``{"codes", "labels", "params", "seed", "n_trees"}``: load the dataset,
  train, return the trees and the cycle counts;
* ``forest``: a list of ``sw.methods.forest.model.Tree`` to load for inference (instead of training);
* ``predict``: ``{"codes", "labels" (or None)}``: stream the rows, return the predicted
  classes, votes, class-count sums, cycles and the on-chip accuracy counters.
"""

import pickle

import cocotb

from sim.host.driver import start_host
from sim.runner import testbench_parameters


@cocotb.test()
async def run_job(dut):
    settings = testbench_parameters()
    with open(settings["job"], "rb") as file:
        job = pickle.load(file)
    host, capacity = await start_host(dut, settings["design"])
    result = {"capacity": capacity}
    if "train" in job:
        train = job["train"]
        await host.load_dataset(train["codes"], train["labels"])
        trees, cycles, sort_cycles = await host.train(train["params"], train["seed"], train["n_trees"])
        result.update(trees=trees, train_cycles=cycles, sort_cycles=sort_cycles)
    if "forest" in job:
        await host.load_forest(job["forest"])
    if "predict" in job:
        predict = job["predict"]
        predicted, votes, sums, cycles = await host.predict(predict["codes"], predict.get("labels"))
        result.update(predicted=predicted, votes=votes, class_count_sums=sums, predict_cycles=cycles,
                      rows_seen=await host.read("ROWS_SEEN"), rows_labelled=await host.read("ROWS_LABELLED"),
                      rows_correct=await host.read("ROWS_CORRECT"))
    with open(settings["result"], "wb") as file:
        pickle.dump(result, file)
