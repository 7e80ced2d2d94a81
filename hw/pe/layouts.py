"""Stream layouts of the processing element, its checked parameters and derived widths."""

from amaranth.lib import data

from hw.checks import bits, check_integer

__all__ = ["list_request_layout", "presorted_word_layout", "node_layout", "code_request_layout",
           "code_answer_layout", "LIMITS", "PEGeometry"]


def list_request_layout(slot_bits):
    """The PE asks for the presorted lists of one slot: features ``slot * lanes`` to
    ``slot * lanes + lanes - 1``, side by side."""
    return data.StructLayout({"slot": slot_bits})


def presorted_word_layout(lanes, row_bits, code_bits, label_bits):
    """One word of a requested slot: per lane the entry at one sorted position of that
    lane's feature (ascending codes), ``last`` on the final position. Lanes past the
    dataset's features carry anything."""
    entry = data.StructLayout({"row": row_bits, "code": code_bits, "label": label_bits})
    return data.StructLayout({"entries": data.ArrayLayout(entry, lanes), "last": 1})


def code_request_layout(feature_bits, row_bits):
    """The PE asks for the code of one (feature, row) (the sparse fill of small bootstraps)."""
    return data.StructLayout({"feature": feature_bits, "row": row_bits})


def code_answer_layout(code_bits, label_bits):
    """The code of the requested (feature, row) and the row's label."""
    return data.StructLayout({"code": code_bits, "label": label_bits})


def node_layout(*, node_bits, feature_bits, code_bits, classes, count_bits, position_bits,
                depth_bits):
    """One node of a trained tree, in the golden model's format (``sw.methods.forest.model.Tree``)."""
    return data.StructLayout({
        "index": node_bits,
        "leaf": 1,
        "feature": feature_bits,
        "threshold": code_bits,
        "left_child": node_bits,
        "right_child": node_bits,
        "class_counts": data.ArrayLayout(count_bits, classes),
        "majority": max(1, (classes - 1).bit_length()),
        "n_samples": count_bits,
        "n_rows": position_bits,
        "depth": depth_bits,
        "last": 1,
    })


#: The range (inclusive) of every parameter of a processing element; ``max_inbag_rows`` is
#: at most ``max_rows``. What the simulated accelerator can be built for follows from it
#: (``sim.backend.LIMITS``).
LIMITS = {
    "max_rows": (2, 1 << 20), "max_samples": (1, 1 << 20), "feature_capacity": (1, 4096),
    "feature_lanes": (1, 64), "code_bits": (1, 24), "classes": (2, 64), "max_depth": (1, 255),
    "max_nodes": (1, 1 << 20), "tree_index_bits": (1, 32), "sparse_rows": (0, 64),
}


class PEGeometry:
    """Parameters of a :class:`hw.pe.ProcessingElement`, checked, with every derived width
    and the layouts of its memories and of a tree's configuration.

    Raises ``TypeError``/``ValueError`` naming the parameter for values out of range
    (the parameters are those of the PE).
    """

    def __init__(self, *, max_rows, max_samples, max_inbag_rows, feature_capacity, feature_lanes,
                 code_bits, classes, max_depth, max_nodes, tree_index_bits, sparse_rows):
        check_integer("max_rows", max_rows, *LIMITS["max_rows"])
        check_integer("max_samples", max_samples, *LIMITS["max_samples"])
        if max_inbag_rows is None:
            max_inbag_rows = max_rows
        check_integer("max_inbag_rows", max_inbag_rows, 1, max_rows)
        check_integer("feature_capacity", feature_capacity, *LIMITS["feature_capacity"])
        check_integer("feature_lanes", feature_lanes, *LIMITS["feature_lanes"])
        if feature_lanes & (feature_lanes - 1):
            raise ValueError(f"feature_lanes must be a power of two, not {feature_lanes}")
        if feature_lanes > 1 and feature_lanes >= 2 * feature_capacity:
            raise ValueError(f"feature_lanes must be at most feature_capacity ({feature_capacity}) "
                             f"rounded up to a power of two, not {feature_lanes}")
        check_integer("code_bits", code_bits, *LIMITS["code_bits"])
        check_integer("classes", classes, *LIMITS["classes"])
        check_integer("max_depth", max_depth, *LIMITS["max_depth"])
        largest_tree = min(2 * max_inbag_rows - 1, (1 << (max_depth + 1)) - 1)
        if max_nodes is None:
            most = LIMITS["max_nodes"][1]
            if largest_tree > most:
                raise ValueError(
                    f"a tree of up to {max_inbag_rows} in-bag rows and depth {max_depth} can have "
                    f"{largest_tree} nodes, more than the {most} a PE stores: lower max_inbag_rows "
                    f"(or max_rows) or max_depth, or pass max_nodes (at most {most}; a tree that "
                    f"needs more stops with a tree error)")
            max_nodes = largest_tree
        check_integer("max_nodes", max_nodes, *LIMITS["max_nodes"])
        check_integer("tree_index_bits", tree_index_bits, *LIMITS["tree_index_bits"])
        check_integer("sparse_rows", sparse_rows, *LIMITS["sparse_rows"])
        self.max_rows = max_rows
        self.max_samples = max_samples
        self.max_inbag_rows = max_inbag_rows
        self.feature_capacity = feature_capacity
        self.feature_lanes = feature_lanes
        self.code_bits = code_bits
        self.classes = classes
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.tree_index_bits = tree_index_bits
        self.sparse_rows = sparse_rows

        self.lane_bits = (feature_lanes - 1).bit_length()
        self.slots = -(-feature_capacity // feature_lanes)
        self.slot_bits = max(1, (self.slots - 1).bit_length())
        self.row_bits = (max_rows - 1).bit_length()
        self.weight_bits = max_samples.bit_length()
        self.label_bits = max(1, (classes - 1).bit_length())
        self.feature_bits = max(1, (feature_capacity - 1).bit_length())
        self.position_bits = bits(max_inbag_rows)
        self.count_bits = bits(max(max_samples, max_inbag_rows))
        self.depth_bits = bits(max_depth)
        self.node_bits = max(1, (max_nodes - 1).bit_length())
        self.visit_bits = max(1, (feature_capacity - 1).bit_length())
        self.feature_count_bits = bits(feature_capacity)    # 0 .. feature_capacity
        self.tag_bits = bits(max_nodes)
        # A partition job is a split node of the level (at least two in-bag rows each, in
        # disjoint segments), so a level holds at most max_inbag_rows // 2 of them.
        self.job_depth = max(1, min(max_nodes, max_inbag_rows // 2))
        self.sparse_entries = max(1, sparse_rows)

        self.node_layout = node_layout(
            node_bits=self.node_bits, feature_bits=self.feature_bits, code_bits=code_bits,
            classes=classes, count_bits=self.count_bits, position_bits=self.position_bits,
            depth_bits=self.depth_bits)
        self.counts_layout = data.ArrayLayout(self.count_bits, classes)
        # A node of the node memory (breadth-first creation order): its split, class counts
        # and in-bag rows, and where its rows start in every list.
        self.record_layout = data.StructLayout({
            "split": 1, "feature": self.feature_bits, "threshold": code_bits,
            "left": self.node_bits, "counts": self.counts_layout, "n_rows": self.position_bits,
            "depth": self.depth_bits, "start": self.position_bits,
        })
        # Beside it, in a memory of its own (two bits wide: one block, no read multiplexer),
        # what the node's review decides: ``leaf`` (the model's leaf decision) and
        # ``deepest`` (at max_depth without a depth limit: a split would overflow), worked
        # out when the node is written.
        self.review_layout = data.StructLayout({"leaf": 1, "deepest": 1})
        self.job_layout = data.StructLayout({"feature": self.feature_bits, "threshold": code_bits,
                                             "start": self.position_bits, "length": self.position_bits})
        self.permutation_layout = data.StructLayout({"tag": self.tag_bits, "feature": self.feature_bits})
        # A tree's configuration as sampled on ``start`` or ``queue`` (the PE's input ports
        # in order, then ``sparse``: the tree is filled by code look-ups).
        self.config_layout = data.StructLayout({
            "seed": 32, "tree_index": tree_index_bits, "n_rows": self.row_bits + 1,
            "n_features": self.feature_count_bits, "n_samples": self.weight_bits, "bootstrap": 1,
            "features_per_split": self.feature_count_bits, "thesis_mode": 1, "depth_limited": 1,
            "depth_limit": self.depth_bits, "min_samples_split": self.row_bits + 2,
            "min_samples_leaf": self.row_bits + 1, "sparse": 1,
        })
