"""A host session on the simulated accelerator: the cocotb side of ``sim.backend``.

Reads a job (a pickle named by the testbench setting ``job``), runs it through
:class:`sim.host.driver.HostDriver` on the simulated ``ForestSystem``, and writes the result (a
pickle named by ``result``). A job is a dict with any of:

* ``train``: ``{"codes", "labels", "params", "seed", "n_trees"}``: load the dataset,
  train, return the trees and the cycle counts;
* ``forest``: a list of ``sw.methods.forest.model.Tree`` to load for inference (instead of training);
* ``predict``: ``{"codes", "labels" (or None)}``: stream the rows, return the predicted
  classes, votes, class-count sums, cycles and the on-chip accuracy counters.

An error the accelerator reports (:class:`sim.host.errors.AcceleratorError`) does not fail
the cocotb test: it is written into the result as ``error`` (message and flags), so that
``sim.backend`` raises it in the user's process. With the setting ``progress`` (a file
name), the session writes ``started`` there once the simulator runs, then the trees done
after each poll that saw more of them.
"""

import pickle

import cocotb

from sim.host.driver import start_host
from sim.host.errors import AcceleratorError
from sim.runner import testbench_parameters


class _Progress:
    """Trees done, written to the file ``path`` (or nowhere) whenever the count grows."""

    def __init__(self, path):
        self.path, self.done = path, -1
        self.write("started")

    def write(self, text):
        if self.path:
            with open(self.path, "w") as file:
                file.write(text)

    def __call__(self, trees_done):
        if trees_done > self.done:
            self.done = trees_done
            self.write(str(trees_done))


async def _run(host, job, result, progress):
    if "train" in job:
        train = job["train"]
        await host.load_dataset(train["codes"], train["labels"])
        trees, cycles, sort_cycles = await host.train(train["params"], train["seed"], train["n_trees"],
                                                      progress=progress)
        result.update(trees=trees, train_cycles=cycles, sort_cycles=sort_cycles)
    if "forest" in job:
        await host.load_forest(job["forest"])
    if "predict" in job:
        predict = job["predict"]
        predicted, votes, sums, cycles = await host.predict(predict["codes"], predict.get("labels"))
        result.update(predicted=predicted, votes=votes, class_count_sums=sums, predict_cycles=cycles,
                      rows_seen=await host.read("ROWS_SEEN"), rows_labelled=await host.read("ROWS_LABELLED"),
                      rows_correct=await host.read("ROWS_CORRECT"))


def load_job():
    """The settings, the job (the pickle the setting ``job`` names) and the progress file."""
    settings = testbench_parameters()
    with open(settings["job"], "rb") as file:
        job = pickle.load(file)
    return settings, job, _Progress(settings.get("progress"))


async def run_and_save(settings, result, work):
    """Await ``work`` (a coroutine filling ``result``); an :class:`AcceleratorError` goes
    into the result as ``error``; the result is written to the file ``result`` names."""
    try:
        await work
    except AcceleratorError as error:
        result["error"] = {"message": error.reason, "flags": error.flags}
    with open(settings["result"], "wb") as file:
        pickle.dump(result, file)


@cocotb.test()
async def run_job(dut):
    settings, job, progress = load_job()
    host, capacity = await start_host(dut, settings["design"])
    result = {"capacity": capacity}
    await run_and_save(settings, result, _run(host, job, result, progress))
