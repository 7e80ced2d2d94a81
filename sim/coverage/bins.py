"""The coverage bins: what each means, the classifiers that find them in a testbench's
case, and the explanations of bins a run may leave unhit.

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
from fnmatch import fnmatchcase

import numpy as np

__all__ = ["CASE_BINS", "STREAM_BINS", "FSM_MEANINGS", "EXPLANATIONS", "UNSAMPLED", "explanation",
           "gini_segment", "sorter_list", "inbag_tree", "partition_job", "pe_tree"]

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

#: (design, kind, group pattern, bin pattern, why the bin may stay unhit), fnmatch patterns.
UNSAMPLED = "the stream driver keeps no such counter (sim/support/streams.py): not sampled"

EXPLANATIONS = [
    ("processing_element", "stream", "codes (source)", "stall_cycles",
     "hw/pe/sparse.py holds codes.ready high throughout 'Look up the drawn rows', the only "
     "state whose code requests the testbench answers: the design cannot stall this stream"),
    ("inference_engine", "stream", "nodes (source)", "stall_cycles",
     "hw/inference.py holds nodes.ready high (every node write is taken, checked and "
     "registered): the design cannot stall this stream"),
    ("processing_element", "fsm transition", "lane*/scanner/fsm_state", "Wait for a segment -> Scan entries",
     "taken by a segment of one class only (no squared totals to sum); the PE makes a pure "
     "node a leaf before any scan (leaf_decision), so its lanes never send one (the Gini "
     "testbench takes it)"),
    ("processing_element", "fsm transition", "fsm_state", "Read a node -> End of the level",
     "hw/pe/controller.py enters 'Read a node' only for a level that has nodes (next_level "
     "writes the tree when a level made no children, review_next goes to 'End of the level' "
     "itself): the guard is defensive and not reached"),
    ("processing_element", "fsm transition", "fsm_state", "Read a partition job -> Write the tree",
     "a level with partition jobs has split a node, so it made children and next_level goes to "
     "the next level, never to 'Write the tree', from 'Read a partition job'"),
    ("processing_element", "fsm transition", "sparse/prologue_state", "* -> Draw the bootstrap",
     "start_prologue is a pulse one cycle after a start (which sends the prologue to Idle in "
     "the cycle before) or from the queue (hw/pe/element.py), which prefetches a queued tree's "
     "prologue only once the running tree's prologue is consumed and the prologue is Idle: "
     "only 'Idle -> Draw the bootstrap' is taken, the other arms of prologue_control are "
     "defensive (not proven unreachable: a formal check would settle it)"),
]


def explanation(block, kind, group, label, hits):
    """Why a bin is unhit, or None when nothing explains it (a counter the drivers do not
    keep, ``hits`` None, is explained as not sampled)."""
    if hits is None:
        return UNSAMPLED
    for design, pattern_kind, group_pattern, bin_pattern, reason in EXPLANATIONS:
        if (fnmatchcase(block, design) and kind == pattern_kind and fnmatchcase(group, group_pattern)
                and fnmatchcase(label, bin_pattern)):
            return reason
    return None


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
