"""The forest trainer's code look-ups: each PE's sparse (thesis-mode) fill asks for the code
of one (feature, row) and its label, and gets them from the PE's own copies of the code
banks (``hw.trainer``), through registers only."""

from amaranth.hdl import Array, Signal

__all__ = ["code_lookups"]


def code_lookups(m, s, max_rows):
    """The PEs' code look-ups (their sparse fill), in the forest trainer ``s`` (its PEs,
    lanes, the code banks' look-up copies and the label look-up ports)."""
    pes, lanes, lane_bits, lookup_ports = s.pes, s.lanes, s.lane_bits, s.code_lookups
    label_lookups = s.label_lookups
    # Per PE three stages: the banks' read (``reading``, every lane's code bank is read)
    # and their words registered (``banked``), the two moving together, then the
    # answer registered (``answer``: the requested feature's lane's code and the
    # label), so a PE sees its answer through no block-RAM output multiplexer. The
    # banks move when the answer has room; a request is taken when they move, so the
    # read ports only move then and an answer holds under stalls.
    for index, (pe, code_ports, label_port) in enumerate(zip(pes, lookup_ports, label_lookups)):
        reading = Signal(name=f"lookup{index}_reading")
        reading_lane = Signal(range(lanes), name=f"lookup{index}_lane")
        banked = Signal(name=f"lookup{index}_banked")
        banked_lane = Signal(range(lanes), name=f"lookup{index}_banked_lane")
        banked_label = Signal.like(label_port.data, name=f"lookup{index}_label")
        answer_valid = Signal(name=f"lookup{index}_valid")
        answer = Signal(pe.codes.p.shape(), name=f"lookup{index}_answer")
        answer_moves = ~answer_valid | pe.codes.ready
        read_moves = ~banked | answer_moves
        take = pe.code_requests.valid & read_moves
        request = pe.code_requests.p
        m.d.comb += [
            pe.code_requests.ready.eq(read_moves),
            label_port.addr.eq(request.row), label_port.en.eq(read_moves),
            pe.codes.valid.eq(answer_valid), pe.codes.p.eq(answer),
        ]
        for port in code_ports:
            m.d.comb += [port.read_addr.eq((request.feature >> lane_bits) * max_rows + request.row),
                         port.read_en.eq(read_moves)]
        with m.If(read_moves):
            m.d.sync += [reading.eq(take),
                         reading_lane.eq(request.feature[:lane_bits] if lane_bits else 0),
                         banked.eq(reading), banked_lane.eq(reading_lane),
                         banked_label.eq(label_port.data)]
        with m.If(answer_moves):
            m.d.sync += [answer_valid.eq(banked),
                         answer.code.eq(Array(port.read_data for port in code_ports)[banked_lane]),
                         answer.label.eq(banked_label)]
        with m.If(s.clearing):
            m.d.sync += [reading.eq(0), banked.eq(0), answer_valid.eq(0)]
