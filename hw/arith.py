"""Exact integer arithmetic for the clock: wide products as registered multiplier tiles,
sums of many terms by carry-save adders and one carry chain, small products in logic.

Used where a score is compared by cross-multiplication (the Gini scanner, the PE's lane
combiner): no multiplier has an adder behind it in its cycle, and no product is formed
whole (``docs/timing.md``).
"""

from amaranth.hdl import Cat, Const, Mux, Signal

__all__ = ["TILE", "tiles", "carry_save_pair", "carry_save_sum", "logic_product_rows"]

#: Width of a multiplier tile (the ECP5's MULT18X18D): the wide products are registered as
#: products of pieces this wide (:func:`tiles`).
TILE = 18


def tiles(m, name, a, b):
    """``a x b`` as registered products of tile-wide pieces, one multiplier tile each: a
    list of (shift, product) pairs, ``a x b`` their sum shifted."""
    products = []
    for i in range(0, len(a), TILE):
        for j in range(0, len(b), TILE):
            x, y = a[i:i + TILE], b[j:j + TILE]
            product = Signal(len(x) + len(y), name=f"{name}_{i}_{j}")
            m.d.sync += product.eq(x * y)
            products.append((i + j, product))
    return products


def _rows(terms, width):
    """(shift, value) terms packed into as few ``width``-bit rows as their bit ranges allow
    (terms that do not overlap share a row: fewer operands to add)."""
    rows = []                                   # [end of the last term, [(shift, value)...]]
    for shift, value in sorted(terms, key=lambda term: term[0]):
        row = next((row for row in rows if row[0] <= shift), None)
        if row is None:
            row = [0, []]
            rows.append(row)
        row[1].append((shift, value))
        row[0] = shift + len(value)
    packed = []
    for _, row in rows:
        parts, at = [], 0
        for shift, value in row:
            parts += [Const(0, shift - at), value]
            at = shift + len(value)
        packed.append(Cat(*parts, Const(0, width - at)))
    return packed


def _carry_save_rows(m, operands, width):
    """``width``-bit operands reduced by a tree of carry-save adders to at most two rows
    with the same sum modulo ``2**width``."""
    while len(operands) > 2:
        a, b, c = operands[:3]
        total, carry = Signal(width), Signal(width)
        m.d.comb += [total.eq(a ^ b ^ c), carry.eq(((a & b) | (a & c) | (b & c)) << 1)]
        operands = operands[3:] + [total, carry]
    return operands


def carry_save_pair(m, plus, minus=()):
    """``(rows, width)``: at most two ``width``-bit rows whose sum modulo ``2**width`` is
    ``sum(plus) - sum(minus)``, from the carry-save adders of :func:`carry_save_sum`
    without its carry chain (a caller may register them in between)."""
    width = max(shift + len(value) for shift, value in [*plus, *minus]) + 2
    negated = [~row for row in _rows(minus, width)]
    operands = _rows(plus, width) + negated
    if negated:
        operands.append(Const(len(negated), width))
    return _carry_save_rows(m, operands, width), width


def carry_save_sum(m, plus, minus=()):
    """``sum(plus) - sum(minus)`` (lists of (shift, value) pairs) modulo ``2**width``, with
    ``width`` two bits above the widest term, from a tree of carry-save adders and one carry
    chain (``-x`` is ``~x + 1``): its top bit is the sign."""
    rows, width = carry_save_pair(m, plus, minus)
    result = Signal(width)
    m.d.comb += result.eq(sum(rows))
    return result


def logic_product_rows(m, name, a, b, plus=()):
    """``a x b + sum(plus)`` in logic, no multiplier block: the partial products (``a``
    where a bit of ``b`` is set, shifted) and the ``plus`` terms ((shift, value) pairs)
    reduced by carry-save adders to two registered rows, returned as (shift, row) pairs
    whose sum is the result modulo ``2**width`` (``width`` is ``len(a) + len(b) + 1``: the
    caller keeps the result below ``2**width``, so it is exact in any sum taken modulo
    ``2**k``, ``k <= width``). The scan's small multiplies are built this way
    (:class:`hw.gini.GiniScanner`, whose weights come as ``w - 1``: ``w x = (w - 1) x + x``)."""
    width = len(a) + len(b) + 1
    partial = _rows([(j, Mux(b[j], a, 0)) for j in range(len(b))] + list(plus), width)
    rows = []
    for i, row in enumerate(_carry_save_rows(m, partial, width)):
        registered = Signal(width, name=f"{name}_row{i}")
        m.d.sync += registered.eq(row)
        rows.append((0, registered))
    return rows
