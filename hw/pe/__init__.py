"""The training processing element: trains one tree at a time, bit-identical to the golden model.

Reference: ``sw.methods.forest.model.train_tree`` (the algorithm is ``docs/algorithm.md``; the design, its
cycle model and measurements are ``docs/gateware.md``). One PE is

* an :class:`hw.inbag.InBagBuilder` that draws the tree's bootstrap from the tree's own
  generator (which then goes on to draw the node features) and filters every presorted
  list it is sent down to the in-bag rows with their weights;
* ``feature_lanes`` :class:`hw.lane.FeatureLane` s, each holding the in-bag lists of every
  ``feature_lanes``-th feature with its own Gini calculator and partition unit;
* a node memory in breadth-first creation order (no heap: ``max_nodes`` entries), the
  level's partition jobs, and a controller (a named-state FSM) that grows the tree level
  by level exactly as the model: leaf decision, per-node feature draws (partial
  Fisher-Yates over a tagged permutation memory, constant features skipped), scans of the
  visited features on their lanes in parallel, the best split with the model's
  tie-breaks, children, then per split the go-left bits and a stable partition of every
  list;
* a tree writer that streams the finished node list out in the model's node format.

Thesis mode (one feature per tree, ``thesis_mode = 1``) is a configuration of
the same PE: only the tree's feature is filled (into lane 0, slot 0), and no partition is
needed (the split feature's own list is already partitioned). With a bootstrap of at most
``sparse_rows`` draws (the thesis's 16) no list is read at all: the PE keeps the distinct
drawn rows with their weights, asks for their codes (``code_requests`` / ``codes``, the
dataset bank addressed {feature, row}) and insertion-sorts them by (code, row), which is
exactly the in-bag list the filter would give, in a few cycles per row instead of one per
dataset row.

The package: :mod:`hw.pe.layouts` (stream layouts, :class:`~hw.pe.layouts.PEGeometry`),
:mod:`hw.pe.element` (the PE's top), :mod:`hw.pe.controller` (its controller FSM),
:mod:`hw.pe.combiner`, :mod:`hw.pe.sparse` and :mod:`hw.pe.writer` (its components).
"""

from hw.pe.element import ProcessingElement
from hw.pe.layouts import (LIMITS, code_answer_layout, code_request_layout, list_request_layout,
                           node_layout, presorted_word_layout)

__all__ = ["ProcessingElement", "LIMITS", "list_request_layout", "presorted_word_layout",
           "node_layout", "code_request_layout", "code_answer_layout"]
