"""The builds the comparison models: the one simulated build (:data:`SIM_DESIGN`, with each
dataset's lanes: :func:`sim_design`), the PEs that fit a 10AX115 (:data:`PE_FIT`,
:data:`PE_LANES`), scikit-learn's thesis set-up, the clock and the bundled datasets.

Code that must see a test's monkeypatching looks these names up on this module
(``builds.SIM_DESIGN``), not on copies imported elsewhere.
"""

#: The one accelerator build every simulated sample runs on (built once by Verilator):
#: large enough for the folds of every thesis dataset (CTG: 1,701 rows; sonar: 60
#: features) and for up to 32 trees per run. Cycles per tree do not depend on P, so it has
#: one PE; the modelled time divides by the P of :data:`PE_FIT`. Thesis-mode trees (16
#: draws) take the sparse fill and, queued back to back, the serialised pipeline; the fill
#: adds about 1,000 ALMs to a PE and no M20K or DSP block, which leaves every P of
#: :data:`PE_FIT` unchanged (they are DSP- or M20K-bound; ``docs/compare.md``). Its in-bag
#: lists hold 1,280 rows, as ctg's estimated PE does (a 1,701-draw bootstrap holds about
#: 1,075 distinct rows); a bootstrap that overflowed them would stop the run.
SIM_DESIGN = {"pe_count": 1, "max_trees": 32, "radix_bits": 8, "traversal_stages": 1,
              "max_rows": 2048, "max_samples": 2048, "feature_capacity": 64, "feature_lanes": 8,
              "code_bits": 16, "classes": 4, "max_depth": 64, "sparse_rows": 16,
              "max_inbag_rows": 1280}

#: PEs that fit a 10AX115 with each dataset's PE (``python -m sw.experiments.pe_fit``: a Yosys
#: ``synth_intel_alm`` estimate of a PE sized for the dataset's 5-fold training set, with
#: 8 and with 4 lanes; the trainer's banks, sorters and list rotor counted once; inference
#: engine, host interface and routing not counted). ESTIMATES, not Quartus. Since the list
#: rotor (no presorted copy per PE) and in-bag lists sized by distinct rows (cmc 1,024,
#: ctg 1,280 rows), every dataset is bound by DSP blocks except ctg (M20K and DSP: 20).
PE_FIT = {"iris": 56, "sonar": 56, "breast_cancer_coimbra": 56, "heart_failure": 56, "cmc": 37,
          "ctg": 20, "wine": 56, "breast_cancer_wisconsin": 42}

#: Feature lanes of each dataset's estimated PE (``python -m sw.experiments.pe_fit``: the lanes,
#: 8 or 4, with more PEs per pass of a tree level; fewer lanes take more cycles per tree
#: but fewer DSP blocks). The simulated samples run on :data:`SIM_DESIGN` with these lanes.
PE_LANES = {"iris": 4, "sonar": 4, "breast_cancer_coimbra": 4, "heart_failure": 4, "cmc": 4,
            "ctg": 8, "wine": 4, "breast_cancer_wisconsin": 4}


def sim_design(name):
    """The simulated build for dataset ``name``: :data:`SIM_DESIGN` with its PE's lanes."""
    return {**SIM_DESIGN, "feature_lanes": PE_LANES.get(name, SIM_DESIGN["feature_lanes"])}


#: scikit-learn set-up of the thesis's software column (Table 4.2: 250 trees, depth 4).
THESIS_SKLEARN = {"n_estimators": 250, "max_depth": 4}

DEFAULT_CLOCK_MHZ = 100.0
BUNDLED_DATASETS = ("iris", "wine", "breast_cancer_wisconsin")
