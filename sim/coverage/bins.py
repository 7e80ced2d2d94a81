"""The coverage bins: what each means, the classifiers that find them in a testbench's
case (bins a run may not leave unhit: see :mod:`sim.coverage.proofs` for the ones proved unreachable).

Three kinds of bins:

* case bins (:data:`CASE_BINS`), per design and group, sampled by the testbench where the
  case is known, through the classifiers below (pure functions of the case, computed from
  the data and the golden model's tree, not from the design's outputs);
* FSM bins: every state and every transition of every FSM of the design, declared from
  the elaborated design (:mod:`sim.coverage.fsm`) and sampled on each change of the
  state signal;
* stream bins (:data:`STREAM_BINS`): per stream of the testbench, the drivers' counters
  at the end of each test.
"""

from fractions import Fraction

import numpy as np

__all__ = ["CASE_BINS", "STREAM_BINS", "FSM_MEANINGS", "UNSAMPLED",
           "gini_segment", "sorter_list", "inbag_tree", "partition_job", "histogram_run", "pe_tree",
           "forest_case"]

_BOUNDARY = {"exactly at": "equal to the limit", "one below": "the limit minus one",
             "one above": "the limit plus one"}

#: design -> group -> bin -> meaning.
CASE_BINS = {
    "gini_scanner": {
        "segment length": {"1": "a segment of one entry (no boundary to score)",
                           "maximum": "a segment of 2**row_bits - 1 entries, the longest the scanner counts"},
        "classes present": {"one": "every entry of the segment has the same label",
                            "every class": "every one of the build's classes occurs in the segment"},
        "score ties": {"tie for the best": "two or more valid boundaries share the best score "
                                           "(the first must win)"},
        "min_samples_leaf": {f"boundary {key}": f"a boundary between different codes whose smaller "
                                                f"side has {text} (min_samples_leaf) entries"
                             for key, text in _BOUNDARY.items()},
        "outcome": {"split found": "a valid split was reported",
                    "no valid split": "no boundary was valid (all codes equal, one entry, or "
                                      "min_samples_leaf too large)"},
    },
    "radix_sorter": {
        "list length": {"1": "a list of one row", "maximum": "a list of max_rows rows"},
        "codes": {"all equal": "every code of the list is the same (a stable sort keeps row order)",
                  "all distinct": "no two codes of the list are equal"},
    },
    "inbag_builder": {
        "rows": {"1": "a dataset of one row", "maximum": "a dataset of max_rows rows"},
        "samples": {"1": "one bootstrap draw", "maximum": "max_samples bootstrap draws"},
        "bootstrap": {"on": "a bootstrap tree", "off": "every row in-bag once (no bootstrap)"},
    },
    "partition_unit": {
        "segment length": {"1": "a segment of one entry",
                           "maximum": "a segment of the longest length the unit is built for"},
        "goes left": {"all left": "every row of the job goes left", "all right": "every row goes right",
                      "mixed": "rows go both ways"},
    },
    "histogram_unit": {
        "run length": {"1": "a histogram of one sample",
                       "maximum": "a histogram of the most samples the unit counts (2**row_bits - 1, "
                                  "or fewer when the weights' width bounds them)"},
        "bins": {"one": "every sample in one bin", "first and last": "samples in bin 0 and in the "
                 "last bin", "same bin twice running": "two consecutive samples in one bin (the "
                 "word written is forwarded to the next read)"},
        "classes present": {"one": "every sample of one class",
                            "every class": "every class of the build occurs in the histogram"},
    },
    "processing_element": {
        "classes present": {"one": "the root holds one class only (a root leaf)",
                            "every class": "the root holds every class the PE is built for"},
        "min_samples_split": {f"node {key}": f"an impure node above the depth limit with {text} "
                                             f"(min_samples_split) distinct rows"
                              for key, text in _BOUNDARY.items()},
        "min_samples_leaf": {
            **{f"node {key}": f"an impure node above the depth limit with 2 * min_samples_leaf "
                              f"{'' if key == 'exactly at' else ('- 1 ' if key == 'one below' else '+ 1 ')}"
                              f"distinct rows (the fewest a split can leave both sides with)"
               for key in _BOUNDARY},
            "child exactly at": "a split leaves one child with exactly min_samples_leaf rows",
            "child one above": "a split leaves its smaller child with min_samples_leaf + 1 rows"},
        "depth": {"limit reached": "an impure node at max_depth is made a leaf",
                  "capacity reached": "a tree reaches the deepest level the PE holds, or needs "
                                      "a deeper one (depth_overflow)"},
        "capacity": {"nodes": "a tree with as many nodes as the PE's node memory holds",
                     "rows": "a dataset of max_rows rows",
                     "in-bag rows": "a tree whose distinct in-bag rows fill a list (max_inbag_rows)",
                     "features": "a dataset of feature_capacity features"},
        "outcome": {"done": "the tree trained and matched the model",
                    "depth_overflow": "the tree needed more levels than the PE holds",
                    "inbag_overflow": "the bootstrap drew more distinct rows than a list holds"},
        "mode": {"forest": "a forest-mode tree", "thesis": "a thesis-mode tree (one feature)",
                 "sparse fill": "a thesis-mode bootstrap small enough for the sparse fill"},
    },
    "forest_trainer": {
        "forest": {"every PE busy": "a forest of at least as many trees as PEs (every PE gets a tree)",
                   "fewer trees than PEs": "a forest of fewer trees than PEs (some PEs stay idle)",
                   "forest mode": "a forest-mode forest", "thesis mode": "a thesis-mode forest"},
        "outcome": {"done": "every tree came out and matched the model",
                    "tree error": "a tree the PEs cannot hold (too deep, or too many distinct "
                                  "in-bag rows) stops the forest with tree_error"},
        "refusal": {label: f"start is refused with bad_config: {label}"
                    for label in ("no trees", "rows not loaded", "features not loaded", "too many trees")}
        | {"dataset error": "a row cut short by last raises dataset_error",
           "start while busy": "a start during a forest is flagged and ignored"},
        "reset": {"while busy": "a reset in the middle of a forest, then a forest that matches the model"},
    },
    "forest_system": {
        "forest": {"inference after training": "the trained forest predicts rows as the model does",
                   "host-loaded forest": "a forest written by the host predicts as the model does",
                   "forest mode": "a forest-mode forest", "thesis mode": "a thesis-mode forest"},
        "outcome": {"done": "every tree came out and matched the model",
                    "tree error": "a tree deeper than the build holds stops training with tree_error"},
        "refusal": {label: f"start is refused with bad_config: {label}"
                    for label in ("no trees", "rows not loaded", "too many trees")}
        | {"value too wide": "a register value wider than its port is refused (value_too_wide)",
           "training zero trees": "the host driver's train() of zero trees raises, naming bad_config"},
        "reset": {"while busy": "a reset in the middle of training, then a forest that matches the model"},
    },
}

#: role -> driver counter -> meaning.
STREAM_BINS = {
    "source": {"transfers": "payloads the design took in",
               "stall_cycles": "cycles the design held ready low while the testbench offered data",
               "idle_cycles": "cycles the testbench held valid low with data waiting"},
    "sink": {"transfers": "payloads the design gave out",
             "stall_cycles": "cycles the design offered data while the testbench held ready low",
             "idle_cycles": "cycles the testbench held ready low"},
}

FSM_MEANINGS = {"fsm state": "the FSM was in this state for at least one cycle",
                "fsm transition": "the FSM went from the first state to the second "
                                  "(an m.next of the design)"}

#: Why a stream counter has no hits at all (None): the driver keeps no such counter.
UNSAMPLED = "the stream driver keeps no such counter (sim/support/streams.py): not sampled"


# ---------------------------------------------------------------------- classifiers
def _boundary_bins(value, limit, prefix):
    return [f"{prefix}{name}" for name, offset in (("exactly at", 0), ("one below", -1), ("one above", 1))
            if value == limit + offset]


def gini_segment(codes, labels, weights, min_samples_leaf, classes, row_bits):
    """The case bins of one Gini segment (codes sorted ascending)."""
    codes, labels, weights = (np.asarray(a, dtype=np.int64) for a in (codes, labels, weights))
    n = len(codes)
    hits = []
    if n == 1:
        hits.append(("segment length", "1"))
    if n == (1 << row_bits) - 1:
        hits.append(("segment length", "maximum"))
    present = len(set(labels.tolist()))
    if present == 1:
        hits.append(("classes present", "one"))
    if present == classes:
        hits.append(("classes present", "every class"))
    counts = np.zeros((n, classes), dtype=np.int64)
    counts[np.arange(n), labels] = weights
    left = np.cumsum(counts, axis=0)
    total = left[-1]
    scores, sides = [], set()
    for i in range(n - 1):
        if codes[i] == codes[i + 1]:
            continue
        smaller = min(i + 1, n - i - 1)
        sides.add(smaller)
        if smaller < min_samples_leaf:
            continue
        l, r = left[i], total - left[i]
        scores.append(Fraction(int((l * l).sum()), int(l.sum())) + Fraction(int((r * r).sum()), int(r.sum())))
    for side in sides:
        hits.extend(("min_samples_leaf", label) for label in _boundary_bins(side, min_samples_leaf, "boundary "))
    if scores and scores.count(max(scores)) > 1:
        hits.append(("score ties", "tie for the best"))
    hits.append(("outcome", "split found" if scores else "no valid split"))
    return sorted(set(hits))


def sorter_list(codes, max_rows):
    """The case bins of one list given to the radix sorter."""
    hits = [("list length", label) for label, length in (("1", 1), ("maximum", max_rows)) if len(codes) == length]
    distinct = len(set(int(code) for code in codes))
    if distinct == 1:
        hits.append(("codes", "all equal"))
    if distinct == len(codes) > 1:
        hits.append(("codes", "all distinct"))
    return hits


def inbag_tree(n_rows, n_samples, bootstrap, max_rows, max_samples):
    """The case bins of one tree of the in-bag builder."""
    hits = [("rows", label) for label, value in (("1", 1), ("maximum", max_rows)) if n_rows == value]
    if bootstrap:
        hits += [("samples", label) for label, value in (("1", 1), ("maximum", max_samples)) if n_samples == value]
    return hits + [("bootstrap", "on" if bootstrap else "off")]


def partition_job(rows, goes_left, max_segment):
    """The case bins of one job of the partition unit."""
    hits = [("segment length", label) for label, value in (("1", 1), ("maximum", max_segment))
            if len(rows) == value]
    left = int(np.count_nonzero(np.asarray(goes_left)[np.asarray(rows)]))
    hits.append(("goes left", "all left" if left == len(rows) else "all right" if left == 0 else "mixed"))
    return hits


def histogram_run(codes, labels, classes, code_bits, longest):
    """The case bins of one histogram's run of samples."""
    codes, labels = np.asarray(codes), np.asarray(labels)
    hits = [("run length", label) for label, value in (("1", 1), ("maximum", longest))
            if len(codes) == value]
    if len(set(codes.tolist())) == 1:
        hits.append(("bins", "one"))
    if {0, (1 << code_bits) - 1} <= set(codes.tolist()):
        hits.append(("bins", "first and last"))
    if np.any(codes[1:] == codes[:-1]):
        hits.append(("bins", "same bin twice running"))
    present = len(set(labels.tolist()))
    hits += [("classes present", label) for label, value in (("one", 1), ("every class", classes))
             if present == value]
    return hits


def _pe_nodes(tree, params):
    """The node bins of a trained tree: min_samples_split and min_samples_leaf boundaries."""
    hits = []
    impure = np.count_nonzero(tree.class_counts, axis=1) > 1
    above_limit = np.ones(tree.n_nodes, bool) if params.max_depth is None else tree.depth < params.max_depth
    for node in np.flatnonzero(impure & above_limit):
        rows = int(tree.n_rows[node])
        hits += [("min_samples_split", label) for label in _boundary_bins(rows, params.min_samples_split, "node ")]
        hits += [("min_samples_leaf", label) for label in _boundary_bins(rows, 2 * params.min_samples_leaf, "node ")]
        if tree.left_child[node] >= 0:
            smaller = min(int(tree.n_rows[tree.left_child[node]]), int(tree.n_rows[tree.right_child[node]]))
            hits += [("min_samples_leaf", f"child {label}")
                     for label in _boundary_bins(smaller, params.min_samples_leaf, "") if label != "one below"]
    if params.max_depth is not None and np.any(impure & (tree.depth == params.max_depth)):
        hits.append(("depth", "limit reached"))
    return hits


def pe_tree(tree, params, n_rows, n_features, outcome, capacity, sparse):
    """The case bins of one tree the PE trained (``tree``: the model's, None when the PE
    was expected to stop with ``outcome`` instead); ``capacity`` a ``PECapacity``."""
    hits = [("outcome", outcome), ("mode", "thesis" if params.thesis_mode else "forest")]
    if sparse:
        hits.append(("mode", "sparse fill"))
    if n_rows == capacity.max_rows:
        hits.append(("capacity", "rows"))
    if n_features == capacity.feature_capacity:
        hits.append(("capacity", "features"))
    if outcome == "depth_overflow":
        hits.append(("depth", "capacity reached"))
    if tree is None:
        return sorted(set(hits))
    present = int(np.count_nonzero(tree.class_counts[0]))
    hits += [("classes present", label) for label, value in (("one", 1), ("every class", capacity.classes))
             if present == value]
    if int(tree.depth.max()) == capacity.max_depth:
        hits.append(("depth", "capacity reached"))
    if tree.n_nodes == capacity.max_nodes:
        hits.append(("capacity", "nodes"))
    if int(tree.n_rows[0]) == capacity.max_inbag_rows:
        hits.append(("capacity", "in-bag rows"))
    return sorted(set(hits + _pe_nodes(tree, params)))


def forest_case(n_trees, pe_count, tree_error, thesis_mode):
    """The case bins of one forest of the trainer (``pe_count`` None: of the system, whose
    forest bins do not count PEs); ``tree_error``: the model says a tree overflows."""
    hits = [("forest", "thesis mode" if thesis_mode else "forest mode"),
            ("outcome", "tree error" if tree_error else "done")]
    if pe_count is not None:
        hits.append(("forest", "every PE busy" if n_trees >= pe_count else "fewer trees than PEs"))
    return hits
