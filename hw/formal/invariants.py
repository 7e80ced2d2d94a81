"""The designs' own invariants, asserted in every proof of their design (so an induction
step may use them as lemmas; a proof passes only if they hold too). Each is a function
of the harness's :class:`hw.formal.harness.Internals`; ``docs/formal.md`` lists them and
says why each holds.

The PE's and the trainer's invariants take the dotted path of the block inside the
design (``""`` for the design itself, ``"pe0"`` inside the trainer, ``"trainer.pe0"``
inside the system), so that a design is proved with the invariants of the blocks it
contains.
"""

from amaranth.hdl import Cat, Mux
from amaranth.lib import data

from hw.pe.read_address import ADDRESS_SELECTS

__all__ = ["in_states", "sorter_invariants", "partition_invariants", "histogram_pe_invariants",
           "histogram_system_invariants", "bootstrap_invariants", "pe_invariants", "trainer_invariants"]


def in_states(signal, *names):
    """``signal`` (an FSM state register) holds one of the states ``names``."""
    found = {}
    for value in range(1 << len(signal)):
        try:
            found[str(signal.decoder(value)).rsplit("/", 1)[0]] = value   # "Idle/0"
        except (KeyError, IndexError):
            continue
    values = [found[name] for name in names if name in found]
    missing = set(names) - set(found)
    if missing:
        raise KeyError(f"{signal.name} has no state {sorted(missing)}")
    return signal.matches(*values)


def _key(prefix, name):
    """The :class:`Internals` key of signal ``name`` of the block at ``prefix``."""
    if prefix:
        return f"{prefix}.{name}"
    return name if "." in name else f".{name}"


def sorter_invariants():
    return {"rows loaded never exceed max_rows":
            lambda s: s["row_count"] <= s.component.max_rows}


def partition_invariants():
    depth = lambda s: s.component.max_segment
    return {
        "queue pointers below max_segment": lambda s: (s["head"] < depth(s)) & (s["tail"] < depth(s)),
        "queue count never exceeds max_segment": lambda s: s["queued"] <= depth(s),
        "previous segment's rows within the queue": lambda s: s["previous_left"] <= s["queued"],
        "queue_empty is queued == 0": lambda s: s["queue_empty"] == (s["queued"] == 0),
        "queue_full is queued == max_segment": lambda s: s["queue_full"] == (s["queued"] == depth(s)),
        "previous_waiting is previous_left != 0": lambda s: s["previous_waiting"] == (s["previous_left"] != 0),
        # One entry held: it is the oldest (a write fills the other).
        "the write buffer's one entry is its oldest": lambda s: (
            ~(s["held0_valid"] ^ s["held1_valid"]) | Mux(s["oldest"], s["held1_valid"], s["held0_valid"])),
    }


def histogram_pe_invariants(prefix=""):
    """A pass's draws: requested ahead of their takes, never past the pass's end (of the
    histogram PE at ``prefix``, its path of submodules in the design)."""
    pe = lambda s: s.block(prefix) if prefix else s.component
    at = lambda s, name: s[_key(prefix, name)]
    n_features = lambda s: data.View(pe(s).start.payload.shape(), at(s, "config")).n_features
    where = f" ({prefix})" if prefix else ""
    return {
        f"taken <= requested <= lanes; requests' position - position = requested - taken{where}":
            lambda s: (at(s, "lane") <= at(s, "requested")) & (at(s, "requested") <= pe(s).lanes)
            & (at(s, "request_position") + at(s, "lane") == at(s, "draw_position") + at(s, "requested")),
        f"position <= the next request's position <= the tree's features{where}":
            lambda s: (at(s, "draw_position") <= at(s, "request_position"))
            & (at(s, "request_position") <= n_features(s)),
        f"a draw being swapped was requested{where}":
            lambda s: ~in_states(at(s, "histogram_pe_state"), "Swap") | (at(s, "lane") < at(s, "requested")),
    }


def histogram_system_invariants(prefix=""):
    """The forest loop (of the histogram system at ``prefix``) runs only while it is busy."""
    at = lambda s, name: s[_key(prefix, name)]
    where = f" ({prefix})" if prefix else ""
    return {f"the forest loop's states only while busy{where}":
            lambda s: ~in_states(at(s, "histogram_system_state"), "Start the tree", "Check the start", "Grow")
            | at(s, "busy")}


def bootstrap_invariants(prefix=""):
    """The bootstrap's draws: taken only once requested, never more than ``max_samples``."""
    from hw.bootstrap import _Phase, bootstrap_start_layout
    at = lambda s, name: s[_key(prefix, name)]

    def counted(s):
        config, requested, drawn = at(s, "bootstrap_config"), at(s, "bootstrap_requested"), at(s, "bootstrap_drawn")
        # (the start's layout from the widths: n_rows is a row number and one bit wider,
        # max_samples as wide as the counters, then the bootstrap flag)
        count_bits = len(requested)
        layout = bootstrap_start_layout(len(config) - count_bits - 2, count_bits)
        max_samples = data.View(layout, config).max_samples
        drawing = at(s, "phase") == _Phase.DRAW.value
        return Mux(drawing, (drawn <= requested) & (requested <= max_samples), (requested == 0) & (drawn == 0))
    where = f" ({prefix})" if prefix else ""
    return {f"draws taken <= requested <= max_samples, none outside the draws{where}": counted}


def pe_invariants(prefix="", servers=True):
    """The PE's error stops (the controller goes Idle with them), its node counters and
    its sparse fill's hand-over; with ``servers``, its list and look-up counters, which
    hold only if its list and code servers answer requests (the PE's own proofs assume
    so; the trainer's and the system's, with the real servers, do not assert them)."""
    at = lambda s, name: s[_key(prefix, name)]
    where = f" ({prefix})" if prefix else ""
    errors = ("bad_input", "inbag_overflow", "node_overflow", "depth_overflow")
    found = {
        f"an error stop leaves the PE idle{where}":
            lambda s: ~Cat(at(s, name) for name in errors).any()
            | in_states(at(s, "fsm_state"), "Idle"),
    }
    review = ("Review the node", "Too deep", "Wait for the scans", "Check constant features",
              "Wait for the constant check", "Draw a feature", "Swap", "Visit the drawn feature",
              "Decide", "Write the left child", "Write the right child")
    found[f"node <= level end <= nodes created <= max_nodes, node < level end in review{where}"] = (
        lambda s: (at(s, "node") <= at(s, "level_end"))
        & (at(s, "level_end") <= at(s, "next_node"))
        & (at(s, "next_node") <= _max_nodes(s, prefix))
        & (~in_states(at(s, "fsm_state"), *review) | (at(s, "node") < at(s, "level_end"))))
    found[f"node + 1, node + 2, level_end + 1 and node + 1 == level_end kept beside them{where}"] = (
        lambda s: (at(s, "node_next") == at(s, "node") + 1)
        & (at(s, "node_after") == at(s, "node") + 2)
        & (at(s, "level_end_next") == at(s, "level_end") + 1)
        & (at(s, "next_is_end") == (at(s, "node") + 1 == at(s, "level_end"))))
    found[f"each address select register is its states' decode{where}"] = (
        lambda s: Cat(at(s, f"state_is_{group}") == in_states(at(s, "fsm_state"), *states)
                      for group, states in ADDRESS_SELECTS.items()).all())
    found[f"nodes_full is next_node + 2 > max_nodes{where}"] = (
        lambda s: at(s, "nodes_full") == (at(s, "next_node") + 2 > _max_nodes(s, prefix)))
    found[f"a refused start is seen only in the state after the start, or Idle{where}"] = (
        lambda s: ~at(s, "start_refused")
        | in_states(at(s, "fsm_state"), "Idle", "Draw the bootstrap", "Wait for the prologue"))
    before_root = ("Wait for the prologue", "Draw the bootstrap", "Draw the tree's feature",
                   "Fill the lists", "Write the root")
    found[f"past the prologue only from the root on{where}"] = (
        lambda s: ~at(s, "past_prologue") | ~in_states(at(s, "fsm_state"), *before_root))
    found[f"the sparse fill works for the tree waiting for it or a prefetched one{where}"] = (
        lambda s: in_states(at(s, "sparse.prologue_state"), "Idle") | at(s, "prefetched")
        | in_states(at(s, "fsm_state"), "Wait for the prologue"))
    found[f"a prefetch only for a queued (or promoted) sparse-fill tree{where}"] = (
        lambda s: ~at(s, "prefetched") | in_states(at(s, "fsm_state"), "Idle")
        | ((at(s, "queued") | in_states(at(s, "fsm_state"), "Take the queued tree"))
           & _config(s, prefix, "queued_config").sparse))
    if servers:
        found[f"sparse fill: look-ups answered <= asked <= rows drawn{where}"] = (
            lambda s: ~in_states(at(s, "sparse.prologue_state"), "Draw the tree's feature",
                                 "Look up the drawn rows")
            | ((at(s, "sparse._answered") <= at(s, "sparse.looked_up"))
               & (at(s, "sparse.looked_up") <= at(s, "sparse.drawn_count"))))
        found[f"lists received <= lists requested <= lists needed{where}"] = (
            lambda s: (at(s, "lists_received") <= at(s, "lists_requested"))
            & (at(s, "lists_requested") <= at(s, "lists_needed")))
    return found


def _max_nodes(s, prefix):
    """The node memory's depth of the PE at ``prefix``."""
    return s.block(prefix).max_nodes


def _config(s, prefix, name):
    """The configuration register ``name`` of the PE at ``prefix``, as its layout."""
    return data.View(s.block(prefix).geometry.config_layout, s[_key(prefix, name)])


def _ones(value):
    return sum(value[index] for index in range(len(value)))


def trainer_invariants(prefix="", pe_count=1):
    """The trainer's dispatch and merge counters; its PEs (reset on an accepted start)."""
    at = lambda s, name: s[_key(prefix, name)]
    # ``trees_done``: the port and the register that drives it, equal.
    done = lambda s: s.all(_key(prefix, "trees_done"))[0]
    where = f" ({prefix})" if prefix else ""
    resets = lambda s: Cat(at(s, f"pe{index}_reset") for index in range(pe_count))
    layout = lambda s: s.block(prefix).nodes.p.shape()
    # A tree's last node in the output or skid register: handed over, not yet out.
    leaving = lambda s: ((at(s, "out_valid") & data.View(layout(s), at(s, "out")).node.last)
                         + (at(s, "out_skid_valid") & data.View(layout(s), at(s, "out_skid")).node.last))
    return {
        f"trees done + trees leaving + trees on the PEs = trees dispatched <= n_trees{where}":
            lambda s: (done(s) + leaving(s) + _ones(at(s, "assigned")) + _ones(at(s, "has_queued"))
                       == at(s, "next_tree")) & (at(s, "next_tree") <= at(s, "n_trees")),
        f"the skid register holds a node only behind the output register, in Train{where}":
            lambda s: (~at(s, "out_skid_valid") | at(s, "out_valid"))
            & (~at(s, "out_valid") | in_states(at(s, "fsm_state"), "Train")),
        f"a tree's node before its last leaves only while the rest is merged or behind it{where}":
            lambda s: (~at(s, "out_valid") | data.View(layout(s), at(s, "out")).node.last
                       | at(s, "locked") | (at(s, "out_skid_valid")
                                            & data.View(layout(s), at(s, "out_skid")).node.last))
            & (~at(s, "out_skid_valid") | data.View(layout(s), at(s, "out_skid")).node.last
               | at(s, "locked")),
        f"more_trees is next_tree < n_trees, last_tree is n_trees - 1 once started{where}":
            lambda s: (at(s, "more_trees") == (at(s, "next_tree") < at(s, "n_trees")))
            & ((at(s, "n_trees") == 0) | (at(s, "last_tree") + 1 == at(s, "n_trees"))),
        f"a queued tree only behind an assigned one{where}":
            lambda s: (at(s, "has_queued") & ~at(s, "assigned")) == 0,
        f"the merge locks only on an assigned PE, in Train{where}":
            lambda s: ~at(s, "locked") | (at(s, "assigned").bit_select(at(s, "owner"), 1)
                                          & in_states(at(s, "fsm_state"), "Train")),
        # (but in the cycle after an accepted start, when the PE is being reset)
        **{f"pe{index} idle while not assigned, outside the trainer's Idle{where}":
           (lambda s, index=index: ~in_states(at(s, "fsm_state"), "Presort", "Train")
            | at(s, "assigned")[index] | at(s, f"pe{index}_reset")
            | in_states(at(s, f"pe{index}.fsm_state"), "Idle"))
           for index in range(pe_count)},
        **{f"pe{index} holds a queued tree only if the trainer queued one{where}":
           (lambda s, index=index: ~in_states(at(s, "fsm_state"), "Presort", "Train")
            | at(s, f"pe{index}_reset")
            | ~at(s, f"pe{index}.queued") | at(s, "has_queued")[index])
           for index in range(pe_count)},
        # The dispatch's start and queue registers: a PE acts on them a cycle after the
        # dispatch, whose bookkeeping (assigned, has_queued) already counts the tree.
        **{f"pe{index}'s start register only to an idle assigned PE, nothing queued, in Train{where}":
           (lambda s, index=index: ~at(s, f"pe{index}_start")
            | (at(s, "assigned")[index] & ~at(s, "has_queued")[index]
               & in_states(at(s, "fsm_state"), "Train") & in_states(at(s, f"pe{index}.fsm_state"), "Idle")))
           for index in range(pe_count)},
        **{f"pe{index}'s queue register only with a tree queued for it, its last node not going out{where}":
           (lambda s, index=index: ~at(s, f"pe{index}_queue")
            | (at(s, "has_queued")[index] & ~at(s, f"pe{index}.queued") & ~at(s, f"pe{index}_start")
               & ~(at(s, "locked") & (at(s, "owner") == index)) & in_states(at(s, "fsm_state"), "Train")))
           for index in range(pe_count)},
        f"the PEs are reset together, only in a presort, nothing merged or assigned{where}":
            lambda s: (resets(s) == 0)
            | (resets(s).all() & in_states(at(s, "fsm_state"), "Presort") & ~at(s, "locked")
               & ~at(s, "out_valid") & (at(s, "assigned") == 0) & (at(s, "has_queued") == 0)),
    }
