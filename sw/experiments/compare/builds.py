"""The builds the comparison models: the one simulated build (:data:`SIM_DESIGN`, with each
dataset's lanes: :func:`sim_design`), the PEs that fit a 10AX115 (:data:`PE_FIT`,
:data:`PE_LANES`), scikit-learn's thesis set-up, the clock and the bundled datasets.

Code that must see a test's monkeypatching looks these names up on this module
(``builds.SIM_DESIGN``), not on copies imported elsewhere.
"""

from hw.designs import build_parameters
from sw.experiments.pe_fit import load_fits
from sw.experiments.thesis_tables import THESIS_SKLEARN

__all__ = ["SIM_DESIGN", "PE_FIT", "PE_LANES", "sim_design", "THESIS_SKLEARN",
           "DEFAULT_CLOCK_MHZ", "BUNDLED_DATASETS"]

#: The one accelerator build every simulated sample runs on (built once by Verilator):
#: the catalogue's ``comparison`` build (``hw/designs.py``), large enough for the folds of
#: every thesis dataset and for up to 32 trees per run. Cycles per tree do not depend on
#: P, so it has one PE; the modelled time divides by the P of :data:`PE_FIT`.
SIM_DESIGN = build_parameters("comparison")

_FITS = load_fits()
#: PEs that fit a 10AX115 with each dataset's PE, and that PE's feature lanes, as measured
#: by ``python -m sw.experiments.pe_fit`` (Yosys estimates, ``docs/pe_fit.json``; the
#: method and what they leave out: ``docs/compare.md``). ESTIMATES, not Quartus.
PE_FIT = {name: fit["pe_count"] for name, fit in _FITS.items()}
PE_LANES = {name: fit["feature_lanes"] for name, fit in _FITS.items()}


def sim_design(name):
    """The simulated build for dataset ``name``: :data:`SIM_DESIGN` with its PE's lanes."""
    return {**SIM_DESIGN, "feature_lanes": PE_LANES.get(name, SIM_DESIGN["feature_lanes"])}


DEFAULT_CLOCK_MHZ = 100.0
BUNDLED_DATASETS = ("iris", "wine", "breast_cancer_wisconsin")
