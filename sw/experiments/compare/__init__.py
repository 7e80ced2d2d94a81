"""The main job: the accelerator against scikit-learn and the thesis (``make``).

``python -m sw.experiments.compare [--datasets ...] [--trees 100] [--depth none] [--folds 5]
[--repeats 10] [--seed 0] [--pe-count auto] [--clock-mhz 100] [--out results]``

For every dataset, stratified k-fold cross-validation repeated ``--repeats`` times (repeat
r shuffles with seed + r; the same folds for all methods):

* the accelerator in **forest mode** (``HardwareForestClassifier``: ``--trees`` trees,
  ``max_features="sqrt"`` per node, full bootstrap, depth ``--depth``) and in **thesis
  mode** (``mode="thesis"``: 250 trees, 16-row bootstrap, depth 4, one feature per tree,
  fixed-point codes). Accuracy comes from the golden model (``backend="model"``), which
  the test suite shows to be bit-exact with the RTL;
* scikit-learn's ``RandomForestClassifier`` with the same hyper-parameters as forest mode,
  and with the thesis's software set-up (250 trees of depth 4): accuracy on every fold
  (``n_jobs=1``), fit time with ``n_jobs=1`` and ``n_jobs=-1`` on the folds of the first
  repeat (the least of ``--cpu-timings`` fits each), measured in this run after everything
  else, so that nothing competes with it;
* the thesis's reported Table 4.2 numbers (:mod:`sw.experiments.thesis_tables`).

Hardware time: per dataset and mode, the first trees of fold 0 are trained in the
Verilator simulation of the whole accelerator (``sim.backend.train`` on one fixed build,
:data:`SIM_DESIGN`, with one PE), checked equal to the golden model's trees ("RTL =
model"), and their cycles give

    modelled time = (load + presort + trees x mean cycles per tree / P) / clock

with load = rows x ceil(features / lanes) stream beats (a beat carries one code per
lane), presort and cycles per tree simulated, P the
estimated number of PEs that fit a 10AX115 (:data:`PE_FIT`) and the clock 100 MHz (the
thesis's). ``docs/compare.md`` explains the method and its assumptions.

The accuracy folds (golden model and scikit-learn alike), the Verilator builds and the
simulated samples run first, on every core (``--jobs`` processes); then the CPU forests
are timed with none of the comparison's own work beside them (what other processes used
meanwhile is measured: ``cpu_timing_background_cores``).

Writes ``results/compare.md``, ``compare.csv`` and ``compare.png``.

Modules: :mod:`.builds` (the simulated build and the PE estimates), :mod:`.cli` (options
and :func:`main`), :mod:`.run` (the folds and the process pool, scikit-learn's timing),
:mod:`.simulate` (the Verilator samples through :mod:`sim.backend`), :mod:`.hwtime` (the
modelled hardware time) and :mod:`.report` (the Markdown report and the plot). The names
below are re-exported for callers; the code reads the builds' constants from
:mod:`.builds`, so that is the module to change (or monkeypatch) them in.
"""

from sw.experiments.compare.builds import (BUNDLED_DATASETS, TARGET_CLOCK_MHZ, proxy_clock, PE_FIT, PE_LANES,
                                           SIM_DESIGN, THESIS_SKLEARN, sim_design)
from sw.experiments.compare.hwtime import (hardware_columns, load_cycles, modelled_seconds,
                                           one_pass_bound_cycles, rotor_wait_cycles)
from sw.experiments.compare.simulate import (sample_job, sample_summary, simulate_samples,
                                             train_by_design)
from sw.experiments.compare.run import (accuracy_row, cross_validate, score_fold, scoring_tasks,
                                        cpu_times)
from sw.experiments.compare.report import accuracy_table, plot, time_table
from sw.experiments.compare.cli import default_datasets, main, parse_arguments

__all__ = ["SIM_DESIGN", "PE_FIT", "PE_LANES", "sim_design", "THESIS_SKLEARN", "TARGET_CLOCK_MHZ", "proxy_clock",
           "BUNDLED_DATASETS", "default_datasets", "parse_arguments", "accuracy_row",
           "cross_validate", "score_fold", "scoring_tasks", "cpu_times", "sample_job",
           "sample_summary", "simulate_samples", "train_by_design", "hardware_columns",
           "load_cycles", "modelled_seconds", "one_pass_bound_cycles", "rotor_wait_cycles", "accuracy_table",
           "time_table", "plot", "main"]
