"""The tree writer's node format: a node memory record as a node of the golden model."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["NodeFormatter"]


class NodeFormatter(wiring.Component):
    """Turns a node record (as read from the node memory) into a node beat.

    Members
    -------
    record : In(record_layout)
        The node's record.
    index : In(node_bits + 1)
        The node's index.
    created : In(node_bits + 1)
        Nodes of the tree (the last one gets ``last``).
    node : Out(node_layout)
        The node in ``sw.methods.forest.model.Tree``'s format: children, feature and
        threshold 0 for a leaf, the majority class the first of the largest counts.
    """

    def __init__(self, geometry):
        self._classes = geometry.classes
        self._label_bits = geometry.label_bits
        super().__init__({
            "record": In(geometry.record_layout),
            "index": In(geometry.node_bits + 1),
            "created": In(geometry.node_bits + 1),
            "node": Out(geometry.node_layout),
        })

    def elaborate(self, platform):
        m = Module()
        classes = self._classes
        record = self.record
        majority = Signal(self._label_bits)
        # A tournament of (count, class) pairs, each match won by the later half only on a
        # strictly larger count: the first of the largest counts, in log2(classes) compare
        # levels. Every winner is a signal of its own, so the expression stays linear in
        # classes (a running Mux over the previous maximum doubles at every class).
        players = [(record.counts[c], c) for c in range(classes)]
        level = 0
        while len(players) > 1:
            winners = []
            for pair in range(0, len(players) - 1, 2):
                (first, first_class), (second, second_class) = players[pair], players[pair + 1]
                count = Signal.like(first, name=f"top_{level}_{pair // 2}")
                label = Signal(self._label_bits, name=f"top_class_{level}_{pair // 2}")
                later = second > first
                m.d.comb += [count.eq(Mux(later, second, first)),
                             label.eq(Mux(later, second_class, first_class))]
                winners.append((count, label))
            if len(players) % 2:
                winners.append(players[-1])
            players = winners
            level += 1
        m.d.comb += majority.eq(players[0][1])
        m.d.comb += [
            self.node.index.eq(self.index),
            self.node.leaf.eq(~record.split),
            self.node.feature.eq(Mux(record.split, record.feature, 0)),
            self.node.threshold.eq(Mux(record.split, record.threshold, 0)),
            self.node.left_child.eq(Mux(record.split, record.left, 0)),
            self.node.right_child.eq(Mux(record.split, record.left + 1, 0)),
            self.node.class_counts.eq(record.counts),
            self.node.majority.eq(majority),
            self.node.n_samples.eq(sum(record.counts[c] for c in range(classes))),
            self.node.n_rows.eq(record.n_rows),
            self.node.depth.eq(record.depth),
            self.node.last.eq(self.index == self.created - 1),
        ]
        return m
