"""The forest trainer's stream layouts, shared by the trainer, the system, the top level
and the host side: a beat of the dataset stream and a node of the trained forest."""

from amaranth.lib import data

__all__ = ["dataset_layout", "forest_node_layout"]


def dataset_layout(code_bits, label_bits, lanes):
    """One beat of the dataset stream: one slot of a row, i.e. the codes of ``lanes``
    consecutive features (``codes[lane]``), the row's label, ``last`` on the final beat."""
    return data.StructLayout({"codes": data.ArrayLayout(code_bits, lanes), "label": label_bits,
                              "last": 1})


def forest_node_layout(tree_bits, node_layout):
    """A node of the trained forest: the tree it belongs to and the PE's node record."""
    return data.StructLayout({"tree": tree_bits, "node": node_layout})
