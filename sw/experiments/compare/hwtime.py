"""The modelled hardware training time: the dataset stream's load, the presort and the
trees over P PEs, at the clock; and the columns it adds to a dataset's row.

    modelled time = (load + presort + trees x mean cycles per tree / P) / clock
"""

from sw.experiments.compare import builds
from sw.experiments.cpu_forests import CPU_FORESTS
from sw.experiments.thesis_tables import THESIS_TREES


#: Column names of the CPU forests (``speedup_vs_sklearn_1core``, ...).
LONG_NAMES = {"sk": "sklearn", "dal": "onedal"}


def load_cycles(shape, design):
    """Cycles of the dataset stream: one beat per row and slot of ``feature_lanes``
    features, taken one per cycle (the trainer is always ready while not busy)."""
    n_rows, n_features = shape
    return n_rows * -(-n_features // design["feature_lanes"])


def rotor_wait_cycles(job, design):
    """Most cycles a tree waits for its lists in a trainer of several PEs: the list rotor
    serves the PEs from one copy of the presorted bank, so a tree's first list may come
    round only after ``ceil(F / lanes)`` other lists; a tree that takes the sparse fill
    reads no list. (A lone PE never waits: the rotor jumps to its list.)"""
    params = job["params"]
    n_rows, n_features = job["codes"].shape
    sparse = (params.thesis_mode and params.bootstrap
              and params.max_samples <= design.get("sparse_rows", 0))
    return 0 if sparse else -(-n_features // design["feature_lanes"]) * n_rows


def one_pass_bound_cycles(tree):
    """The one-pass bound of a tree (issue #25): every in-bag row read once per level in
    which it sits in an internal node, one row per cycle, i.e. the sum over the levels of the
    distinct in-bag rows of that level's internal nodes (``tree``: a golden-model tree)."""
    return int(tree.n_rows[~tree.is_leaf].sum())


def modelled_seconds(sample, n_trees, pe_count, clock_hz):
    """(load + presort + start/finish + n_trees x (cycles per tree + the most it can wait
    for its lists, with P > 1) / P) / clock, in seconds."""
    wait = sample.get("rotor_wait_cycles", 0) if pe_count > 1 else 0
    cycles = (sample["load_cycles"] + sample["sort_cycles"] + sample.get("overhead_cycles", 0)
              + n_trees * (sample["cycles_per_tree"] + wait) / pe_count)
    return cycles / clock_hz


def hardware_columns(row, samples, arguments):
    """Add the simulated samples, modelled times and speed-ups to ``row``."""
    # Imported here: pe_fit pulls in the gateware (hw, Amaranth), needed only with simulation.
    from sw.experiments import pe_fit
    pe_count = arguments.pe_count or builds.PE_FIT[row["dataset"]]
    if pe_count < 1:
        raise RuntimeError(f"{row['dataset']}: not one PE sized for it fits the 10AX115 with "
                           f"{pe_fit.P_RULE} (docs/pe_fit.json); pass --pe-count for a what-if")
    clock_hz = arguments.clock_mhz * 1e6
    # The estimate's PEs hold in-bag lists shorter than the rows (sw.experiments.pe_fit): every
    # tree of the modelled forests must fit them, or its P does not apply.
    lists = pe_fit.pe_parameters(row["rows"], row["features"], 2)["max_inbag_rows"]
    needed = max(samples[mode]["inbag_rows_max"] for mode in ("forest", "thesis"))
    if needed > lists and not arguments.pe_count:
        raise RuntimeError(f"{row['dataset']}: a tree's bootstrap holds {needed} distinct rows, more "
                           f"than the {lists} of the in-bag lists PE_FIT's estimate assumes; its "
                           f"P = {pe_count} does not apply (pass --pe-count)")
    row.update(pe_count=pe_count, pe_count_source="option" if arguments.pe_count else "estimate",
               clock_mhz=arguments.clock_mhz, pe_list_rows=lists, inbag_rows_max=needed)
    for mode, n_trees in (("forest", arguments.trees), ("thesis", THESIS_TREES)):
        sample = samples[mode]
        row.update({f"sim_{mode}_{key}": value for key, value in sample.items()})
        row[f"hw_{mode}_ms"] = 1000 * modelled_seconds(sample, n_trees, pe_count, clock_hz)
    # Thesis mode against scikit-learn's thesis set-up (250 trees of depth 4).
    for jobs in ("1", "all"):
        row[f"speedup_thesis_{jobs}"] = row[f"fit_sk_thesis_{jobs}_ms"] / row["hw_thesis_ms"]
    row.update(baseline_columns(row))
    # Forest mode's cycles per tree against the one-pass bound of the same sampled trees.
    forest = samples["forest"]
    row.update(cycles_per_tree=forest["cycles_per_tree"],
               one_pass_bound_cycles=forest["one_pass_bound_cycles"],
               cycles_over_one_pass_bound=forest["cycles_per_tree"] / forest["one_pass_bound_cycles"])
    row["rtl_equals_model"] = bool(samples["forest"]["equal"] and samples["thesis"]["equal"])
    return row


def baseline_columns(row):
    """Forest mode's speed-ups against each CPU forest (:mod:`sw.experiments.cpu_forests`)
    and against the fastest: the trainer with the shortest single-core fit on this dataset
    in this run. ``cpu_cores_replaced`` = the fastest single-core time / the modelled
    hardware time: how many cores running the fastest trainer (at perfect scaling) one
    FPGA matches."""
    hw_ms = row["hw_forest_ms"]
    one_core = {trainer: row[f"fit_{trainer}_forest_1_ms"] for trainer in CPU_FORESTS}
    all_cores = {trainer: row[f"fit_{trainer}_forest_all_ms"] for trainer in CPU_FORESTS}
    fastest = min(one_core, key=one_core.get)
    columns = {f"speedup_vs_{LONG_NAMES[trainer]}_{jobs}": times[trainer] / hw_ms
               for trainer in CPU_FORESTS for jobs, times in (("1core", one_core), ("allcores", all_cores))}
    columns.update(fastest_cpu_trainer=CPU_FORESTS[fastest][0],
                   speedup_vs_fastest_cpu_1core=one_core[fastest] / hw_ms,
                   speedup_vs_fastest_cpu_allcores=min(all_cores.values()) / hw_ms,
                   cpu_cores_replaced=one_core[fastest] / hw_ms)
    return columns
