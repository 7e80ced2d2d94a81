"""The per-tree pseudo-random generator shared by the golden model and the gateware.

This module is the specification of ``hw.rng.TreeRandom``: both must produce the same
numbers in the same order, bit for bit.

Generator
---------
A counter-based SplitMix32 stream (Steele, Lea and Flood, "Fast splittable pseudorandom
number generators", OOPSLA 2014), with MurmurHash3's 32-bit finaliser as the mixing
function::

    mix32(x):  x ^= x >> 16;  x *= 0x85EBCA6B;  x ^= x >> 13;  x *= 0xC2B2AE35;  x ^= x >> 16

All arithmetic is modulo 2**32. A tree's stream is keyed from (forest seed, tree index)
alone, so a forest never depends on how many processing elements trained it::

    seed_hash = mix32(seed ^ SEED_SALT)
    key       = mix32(seed_hash ^ tree_index)
    gamma     = mix32(key ^ GAMMA_SALT) | 1          # odd: the counter has period 2**32
    raw[i]    = mix32(key + (i + 1) * gamma)         # i = 0, 1, 2, ...

Why this generator: every raw word is a function of its index, so the golden model draws
a whole bootstrap with one vectorised NumPy expression (an xorshift or LFSR would force a
Python loop over samples or GF(2) jump matrices), while the gateware is one adder plus a
two-stage pipelined mixer yielding one raw word per cycle. Each tree has its own odd
increment ``gamma``, so the streams of two trees are not shifted copies of each other
(with one shared increment, 250 trees drawing 10^5 words each would overlap with
probability close to one by the birthday bound on a 32-bit state). The period of one
tree's stream is 2**32 words.

Bounded draws
-------------
An integer uniform in [0, bound) is drawn by rejection, which is exactly unbiased:
``mask`` is the smallest all-ones number >= bound - 1; a raw word is accepted when
``raw & mask < bound``, otherwise it is discarded and the next raw word is tried. Fewer
than two raw words are used per draw on average. ``bound`` must be >= 1 (bound 1 always
gives 0 and still uses one raw word).
"""

import numpy as np

from sw.methods.params import check_integer

__all__ = [
    "WORD_BITS", "SEED_SALT", "GAMMA_SALT", "MIX_MULTIPLIER_1", "MIX_MULTIPLIER_2",
    "mix32", "bound_mask", "tree_stream_key", "TreeRandom",
]

WORD_BITS = 32
_WORD_MASK = (1 << WORD_BITS) - 1
#: Salts (digits of pi and e) keep seed 0 / tree 0 away from the all-zero fixed point of mix32.
SEED_SALT = 0x243F6A88
GAMMA_SALT = 0xB7E15162
MIX_MULTIPLIER_1 = 0x85EBCA6B
MIX_MULTIPLIER_2 = 0xC2B2AE35


def mix32(x):
    """MurmurHash3's 32-bit finaliser, on a Python int or element-wise on an integer array.

    A bijection of 32-bit words with full avalanche. Arrays are computed in uint64 so
    that the products never overflow; the result has the input's shape, as uint64.
    """
    if isinstance(x, (int, np.integer)):
        x = int(x) & _WORD_MASK
        x ^= x >> 16
        x = (x * MIX_MULTIPLIER_1) & _WORD_MASK
        x ^= x >> 13
        x = (x * MIX_MULTIPLIER_2) & _WORD_MASK
        x ^= x >> 16
        return x
    x = np.asarray(x).astype(np.uint64) & np.uint64(_WORD_MASK)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(MIX_MULTIPLIER_1)) & np.uint64(_WORD_MASK)
    x ^= x >> np.uint64(13)
    x = (x * np.uint64(MIX_MULTIPLIER_2)) & np.uint64(_WORD_MASK)
    x ^= x >> np.uint64(16)
    return x


def bound_mask(bound):
    """The rejection mask for ``bound``: all ones, just wide enough to hold ``bound - 1``."""
    return (1 << (int(bound) - 1).bit_length()) - 1


def _check_word(name, value):
    return check_integer(name, value, 0, _WORD_MASK)


def tree_stream_key(seed, tree_index):
    """Return ``(key, gamma)`` of the stream of tree ``tree_index`` in the forest ``seed``."""
    seed = _check_word("seed", seed)
    tree_index = _check_word("tree_index", tree_index)
    key = mix32(mix32(seed ^ SEED_SALT) ^ tree_index)
    gamma = mix32(key ^ GAMMA_SALT) | 1
    return key, gamma


class TreeRandom:
    """The random stream of one tree, as the golden model consumes it.

    Parameters
    ----------
    seed : int
        Forest seed, in [0, 2**32).
    tree_index : int
        Index of the tree in the forest, in [0, 2**32).

    Attributes
    ----------
    position : int
        Number of raw words consumed so far (the gateware's counter value).
    """

    def __init__(self, seed, tree_index):
        self.seed = seed
        self.tree_index = tree_index
        self.key, self.gamma = tree_stream_key(seed, tree_index)
        self.position = 0

    def raw_at(self, indices):
        """Raw words at the given stream indices (does not move the stream)."""
        indices = np.asarray(indices, dtype=np.uint64)
        state = (np.uint64(self.key) + (indices + np.uint64(1)) * np.uint64(self.gamma)) \
            & np.uint64(_WORD_MASK)
        return mix32(state)

    def raw(self, count):
        """The next ``count`` raw 32-bit words, as uint64."""
        count = int(count)
        words = self.raw_at(np.arange(self.position, self.position + count, dtype=np.uint64))
        self.position += count
        return words

    def integers(self, bound, count):
        """``count`` independent integers uniform in [0, bound), drawn by rejection.

        Vectorised: candidates are produced in batches and the first ``count`` accepted
        ones are kept; the stream advances past the last accepted candidate only.
        """
        bound = self._check_bound(bound)
        count = int(count)
        if count < 0:
            raise ValueError(f"count must be >= 0, not {count}")
        mask = np.uint64(bound_mask(bound))
        found = []
        missing = count
        while missing > 0:
            # Acceptance probability is > 1/2, so 2 * missing + 32 candidates nearly always suffice.
            batch = 2 * missing + 32
            candidates = self.raw_at(
                np.arange(self.position, self.position + batch, dtype=np.uint64)) & mask
            accepted = np.flatnonzero(candidates < np.uint64(bound))
            if len(accepted) >= missing:
                accepted = accepted[:missing]
                self.position += int(accepted[-1]) + 1
            else:
                self.position += batch
            found.append(candidates[accepted])
            missing -= len(accepted)
        if not found:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate(found).astype(np.int64)

    def integer(self, bound):
        """One integer uniform in [0, bound)."""
        return int(self.integers(bound, 1)[0])

    def integers_each(self, bounds):
        """One integer per entry of ``bounds``, each uniform in [0, bound), in order."""
        return np.array([self.integer(bound) for bound in bounds], dtype=np.int64)

    @staticmethod
    def _check_bound(bound):
        return check_integer("bound", bound, 1, _WORD_MASK)
