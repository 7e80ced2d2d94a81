# hwforest: `make` runs the main job, `make test` the tests. Both create .venv and
# install the project on first use (a stamp file keeps later calls from reinstalling).

PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
BUILD  := build

.DEFAULT_GOAL := all
.PHONY: help all compare comparelarge setup verilog sim avalon formal coverage limits regress resources fmax fmaxnexus quartus bench outofcore histpe accuracy metric elm mnist baselines test test-long clean distclean

$(STAMP): pyproject.toml
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -e .
	@touch $(STAMP)

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: $(STAMP) ## create .venv and install the project (done by every target on first use)

# The main job: the accelerator (forest and thesis mode) against scikit-learn and the
# thesis's reported numbers on every dataset available: k-fold accuracy, and training time
# modelled from cycles simulated in Verilator (docs/compare.md). Writes results/compare.md,
# .csv and .png. 13 to 20 minutes on two cores the first time (ten CV repeats, Verilator builds).
# Options pass through: make DATASETS="iris sonar" TREES=100 DEPTH=none FOLDS=5 REPEATS=10 SEED=0
# PE_COUNT=auto CLOCK_MHZ=100 JOBS=2 COMPARE_ARGS="--sim-trees 8".
all: compare ## the main job (same as make compare)

COMPARE_OPTIONS = $(if $(DATASETS),--datasets $(DATASETS)) $(if $(TREES),--trees $(TREES)) \
    $(if $(DEPTH),--depth $(DEPTH)) $(if $(FOLDS),--folds $(FOLDS)) \
    $(if $(REPEATS),--repeats $(REPEATS)) $(if $(SEED),--seed $(SEED)) \
    $(if $(PE_COUNT),--pe-count $(PE_COUNT)) $(if $(CLOCK_MHZ),--clock-mhz $(CLOCK_MHZ)) \
    $(if $(JOBS),--jobs $(JOBS))

compare: $(STAMP) ## accelerator vs scikit-learn vs the thesis: results/compare.{md,csv,png}
	$(VPY) -m sw.experiments.compare $(strip $(COMPARE_OPTIONS) $(COMPARE_ARGS))

# The comparison on the data folder's sets larger than the chip (isolet, mnist_test10k): forest
# mode on the simulated histogram system with its codes in the simulated DDR4, one CV repeat
# (docs/compare.md, "Datasets larger than the chip"; ~60 min on two cores).
comparelarge: $(STAMP) ## the comparison on isolet and mnist_test10k (histogram PE, codes in DDR4): results/large/compare.{md,csv,png}
	$(VPY) -m sw.experiments.compare --datasets isolet mnist_test10k --repeats 1 --out results/large $(COMPARE_ARGS)

verilog: $(STAMP) ## Verilog of every catalogued design into build/verilog/
	$(VPY) -m hw.flows.verilog --out $(BUILD)/verilog

sim: $(STAMP) ## every cocotb testbench under Verilator
	$(VPY) -m sim.runner

# forest_top (hw/top.py) driven through its Avalon-MM interfaces only: register slave and a
# memory model with random waitrequest and read latency (docs/registers.md): random forests
# and iris on forest_top_small and, at two clock pairs, on forest_top_small_cdc (separate core
# clock); sonar and ctg on forest_top_datasets. AVALON_ARGS passes options, e.g.
# AVALON_ARGS="--seed 7 --datasets sonar".
avalon: $(STAMP) ## forest_top through Avalon-MM only: 20 random forests, iris, sonar and ctg against the golden model, also across two clocks
	$(VPY) -m sim.tb_top $(AVALON_ARGS)

# Formal proofs (SymbiYosys, smtbmc with Z3): the stream rules of every output stream and
# the blocks' invariants at small parameters (docs/formal.md; ~9 min). FORMAL_ARGS passes
# options, e.g. FORMAL_ARGS="radix_sorter --depth 12" or "--quick".
formal: $(STAMP) ## formal proofs of the stream rules and invariants: results/formal.md
	$(VPY) -m hw.flows.formal --out $(BUILD)/formal --report results/formal.md $(FORMAL_ARGS)

# Functional coverage of the testbenches (docs/coverage.md): every listed bin hit (a bin leaves
# the list only by a formal proof, sim/coverage/proofs.py), or the run fails.
coverage: $(STAMP) ## functional coverage of the testbenches, every listed bin hit: results/coverage.md
	$(VPY) -m sim.coverage --out results

# Every design at each parameter's maximum (docs/simulation.md, "Limit cases").
limits: $(STAMP) ## every design at each parameter's maximum against the golden model: results/limits.md
	$(VPY) -m sim.limits --report results/limits.md $(LIMITS_ARGS)

# Random regression of the forest trainer against the golden model on Dask (docs/regress.md):
# CASES cases from SEED, on a LocalCluster (one worker per core) or the Dask scheduler at
# SCHEDULER (or DASK_SCHEDULER_ADDRESS). A failing case reruns alone from its seed.
CASES ?= 100
regress: $(STAMP) ## random regression on Dask (CASES=N SEED=S SCHEDULER=ADDRESS): results/regress/
	$(VPY) -m sim.regress --cases $(CASES) $(if $(SEED),--seed $(SEED)) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) --out results/regress $(REGRESS_ARGS)

# Per-module resource estimates from a full Yosys (Cyclone V cells as an Arria 10 proxy).
resources: $(STAMP) ## Yosys resource estimates for the Arria 10: results/resources.md
	$(VPY) -m hw.flows.resources --out $(BUILD)/resources --report results/resources.md

# Fmax lower-bound proxy: nextpnr-ecp5 on a Lattice ECP5-85K, a slower family, every design
# at the comparison's widths, three placement seeds (hours); records docs/fmax.json, whose
# minimum is the comparison's clock. One entry: make fmax FMAX_ARGS="gini_scanner --seeds 1".
fmax: $(STAMP) ## Fmax lower-bound proxy on nextpnr-ecp5: results/fmax.md
	$(VPY) -m hw.flows.fmax --out $(BUILD)/fmax --report results/fmax.md $(FMAX_ARGS)

# Fmax proxy on a 28 nm Lattice Nexus LIFCL-40 beside the ECP5 (issue #21): the blocks and the
# inference engine by default; records docs/fmax_nexus.json (never the comparison's clock).
fmaxnexus: $(STAMP) ## Fmax proxy on nextpnr-nexus (LIFCL-40, 28 nm) beside ECP5: results/fmax_nexus.md
	$(VPY) -m hw.flows.fmax_nexus --seeds 3 --out $(BUILD)/fmax_nexus --report results/fmax_nexus.md $(FMAX_NEXUS_ARGS)

# forest_top's Verilog and Platform Designer component (_hw.tcl) for the Arria 10 (no Quartus
# needed to write them; docs/arria10.md says what to add in Quartus). QUARTUS_ARGS="--probe"
# writes the stand-alone synthesis probe project instead, e.g.
# "--probe --set forest_system.pe_count=4".
quartus: $(STAMP) ## write forest_top's Platform Designer component (_hw.tcl) into build/quartus/ (QUARTUS_ARGS=--probe: the probe project; --component histogram_top: the histogram system's)
	$(VPY) -m hw.flows.quartus --out $(BUILD)/quartus $(QUARTUS_ARGS)

# Cycles per tree against the cycle model, speed-ups and what limits them, golden model vs
# scikit-learn fit time, simulation speed (results/bench.md; runs the comparison first if
# results/compare.csv is missing).
bench: $(STAMP) ## cycles per tree vs the cycle model, speed-up limits, sim speed: results/bench.md
	@test -f results/compare.csv || $(MAKE) --no-print-directory compare
	$(VPY) -m sw.experiments.bench $(if $(DATASETS),--datasets $(DATASETS)) $(BENCH_ARGS)

# The out-of-core plan (issue #22; its PE is built with the dataset on the chip, not its
# DDR4 store): a histogram PE's cycles and DDR4 reads per tree, priced from trees equal to
# the golden model's, beside today's PE and the CPU, and what its 8-bit codes cost in
# accuracy (~15 min).
outofcore: $(STAMP) ## the out-of-core plan's cost model and its 8-bit accuracy (isolet and MNIST too): results/out_of_core.{md,png}, results/eight_bit_codes{,_large}.md
	$(VPY) -m sw.experiments.out_of_core $(if $(DATASETS),--datasets $(DATASETS))
	$(VPY) -m sw.experiments.eight_bit_codes
	$(VPY) -m sw.experiments.eight_bit_codes --datasets isolet mnist_test10k --seeds 1 --trees 30 --out results/eight_bit_codes_large.md

# The histogram PE (the out-of-core plan's PE) in Verilator: trees of random20k and isolet
# on builds sized to them, and of the thesis datasets on the build that holds them, node
# for node as the model, with the cost model, the one-pass bound, oneDAL and where the
# cycles go; then isolet and the thesis sets again with the codes read from the simulated
# DDR4 (~60 min: the large builds compile for minutes).
THESIS_SETS := iris sonar ctg cmc wine breast_cancer_coimbra heart_failure breast_cancer_wisconsin
histpe: $(STAMP) ## random20k, isolet and the thesis datasets on the simulated histogram PE (codes on the chip, then in memory), and the estimator's fits through the histogram system: results/histogram_pe_{trees,thesis}{,_memory}.{md,png}, results/histogram_fits.md
	$(VPY) -m sw.experiments.histogram_pe_trees
	$(VPY) -m sw.experiments.histogram_pe_trees --datasets $(THESIS_SETS) --trees 3 --build histogram_pe_datasets --out results/histogram_pe_thesis.md
	$(VPY) -m sw.experiments.histogram_pe_trees --datasets isolet --code-store memory --out results/histogram_pe_trees_memory.md
	$(VPY) -m sw.experiments.histogram_pe_trees --datasets ctg cmc sonar --build histogram_pe_datasets --code-store memory --out results/histogram_pe_thesis_memory.md
	$(VPY) -m sw.experiments.histogram_fits

# Forest and thesis mode accuracy against scikit-learn, 5-fold CV x 3 seeds (~6 min).
accuracy: $(STAMP) ## model vs scikit-learn accuracy, 5-fold CV x 3 seeds: results/accuracy_*.md
	$(VPY) -m sw.experiments.accuracy --seeds 3

# Thesis Table 3.1: triplet mining for large-margin metric learning (results/metric/).
metric: $(STAMP) ## thesis Table 3.1, metric learning: results/metric/
	$(VPY) -m sw.experiments.metric_table

# Seed 002's extreme learning machines: chapter 3's model-selection costs (Table 3.1) and
# chapter 4's incremental ELMs (Tables 4.2, 4.3, speed-up on Dask) (docs/elm.md,
# docs/incremental_elm.md; ~15 min).
elm: $(STAMP) ## seed 002 ELMs: results/elm_cost.*, results/ielm_*
	$(VPY) -m sw.experiments.elm_cost
	$(VPY) -m sw.experiments.ielm_tables

# Seeds 004 and 001 on MNIST: naive Bayes and gradient logistic regression, the entropy
# tree on LDA features (docs/linear.md, docs/entropy_tree.md; ~15 min).
mnist: $(STAMP) ## seeds 004 and 001 on MNIST: results/seed004_mnist.*, results/seed001_mnist.*
	$(VPY) -m sw.experiments.seed004_mnist
	$(VPY) -m sw.experiments.seed001_mnist

# The host library's neural-network, linear and tree methods beside the hardware forest and
# the CPU forests, same folds (docs/baselines.md; ~10 min). DATASETS as for compare;
# BASELINES_ARGS passes options (e.g. "--repeats 5 --methods elm sk_nb").
baselines: $(STAMP) ## every host-library method beside the HW forest: results/baselines.{md,csv,png}
	$(VPY) -m sw.experiments.baselines $(if $(DATASETS),--datasets $(DATASETS)) $(BASELINES_ARGS)

# CI runs make test. Tests marked long (simulations of minutes each, the checks of a shorter
# test on a bigger build, more PEs or a longer forest) skip unless HWFOREST_LONG_SIMS=1.
# The suite runs on every core (pytest-xdist), a test file per worker at a time
# (tests/conftest.py schedules them); PYTEST_ARGS="-n 0" runs it in one process.
PARALLEL = -n auto
test: $(STAMP) ## the test suite (pytest on every core, Verilator simulations included, long ones skipped); PYTEST_ARGS passes options
	$(VPY) -m pytest $(PARALLEL) $(PYTEST_ARGS)

test-long: $(STAMP) ## only the long simulations make test skips (HWFOREST_LONG_SIMS=1 pytest -m long)
	HWFOREST_LONG_SIMS=1 $(VPY) -m pytest $(PARALLEL) -m long $(PYTEST_ARGS)

clean: ## remove build/, results/ and pytest caches
	rm -rf $(BUILD) results .pytest_cache

distclean: clean ## also remove .venv
	rm -rf $(VENV) *.egg-info
