"""The builds the comparison models: the one simulated build (:data:`SIM_DESIGN`, with each
dataset's lanes: :func:`sim_design`), the PEs that fit a 10AX115 (:data:`PE_FIT`,
:data:`PE_LANES`), scikit-learn's thesis set-up, the clock (:func:`proxy_clock`) and the
bundled datasets.

Code that must see a test's monkeypatching looks these names up on this module
(``builds.SIM_DESIGN``), not on copies imported elsewhere.
"""

from hw.designs import build_parameters
from sw.experiments.pe_fit import load_fits
from sw.experiments.pe_fit import staleness as pe_fit_staleness
from sw.experiments.thesis_tables import THESIS_SKLEARN

__all__ = ["SIM_DESIGN", "PE_FIT", "PE_LANES", "sim_design", "THESIS_SKLEARN",
           "TARGET_CLOCK_MHZ", "proxy_clock", "pe_fit_staleness", "BUNDLED_DATASETS"]

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


#: The clock the Arria 10 design is constrained to (the thesis's): the comparison's clock
#: once every design reaches it on the slower proxy fabric, never more.
TARGET_CLOCK_MHZ = 100.0


def proxy_clock():
    """``(MHz, where it comes from)``: the clock the slower proxy fabric already closes, the
    ECP5 proxy's minimum Fmax over every design measured (``docs/fmax.json``, written by
    ``make fmax``), rounded down, and :data:`TARGET_CLOCK_MHZ` once every design reaches it."""
    # Imported here: the flow loads the gateware, needed only with simulation.
    from hw.flows.fmax import proxy_clock as measured
    record = measured()
    if record["clock_mhz"] is None:
        raise SystemExit("no design has an Fmax in docs/fmax.json: run 'make fmax' first, or "
                         "pass --clock-mhz for a what-if")
    clock = min(TARGET_CLOCK_MHZ, float(record["clock_mhz"]))
    text = (f"the ECP5-85F speed 8 proxy's minimum Fmax over the designs in docs/fmax.json "
            f"(`make fmax`, minimum over placement seeds), rounded down: {record['clock_mhz']} MHz, "
            f"limited by {record['limited_by']}")
    if clock < record["clock_mhz"]:
        text = f"the target clock: every design in docs/fmax.json closes {TARGET_CLOCK_MHZ:g} MHz on the ECP5 proxy"
    if record["missing"]:
        text += f"; not measured yet: {', '.join(record['missing'])}"
    if record["stale"]:
        text += f"; measured on older gateware: {', '.join(record['stale'])}"
    return clock, text
BUNDLED_DATASETS = ("iris", "wine", "breast_cancer_wisconsin")
