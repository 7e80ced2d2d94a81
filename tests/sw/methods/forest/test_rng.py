"""The per-tree generator's NumPy model against a plain re-implementation of its spec."""

import numpy as np
import pytest
from scipy import stats

from sw.methods.forest.rng import TreeRandom, bound_mask, mix32, tree_stream_key

M32 = 0xFFFFFFFF


def spec_mix32(x):
    # Written again from the docstring of sw/methods/forest/rng.py, in plain Python integers.
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & M32
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & M32
    return x ^ (x >> 16)


def spec_stream(seed, tree, count):
    key = spec_mix32(spec_mix32(seed ^ 0x243F6A88) ^ tree)
    gamma = spec_mix32(key ^ 0xB7E15162) | 1
    return [spec_mix32((key + (i + 1) * gamma) & M32) for i in range(count)]


def spec_integer(words, bound):
    mask = 1
    while mask < bound:
        mask <<= 1
    mask -= 1
    for used, word in enumerate(words, 1):
        if word & mask < bound:
            return word & mask, used
    raise AssertionError("stream too short")


@pytest.mark.parametrize("seed, tree", [(0, 0), (1, 0), (0, 1), (M32, 65535), (123456789, 42)])
def test_raw_stream_follows_the_spec(seed, tree):
    assert [int(w) for w in TreeRandom(seed, tree).raw(64)] == spec_stream(seed, tree, 64)


def test_mix32_scalar_and_array_agree_and_is_a_bijection_sample():
    rng = np.random.default_rng(0)
    words = rng.integers(0, 1 << 32, size=20000, dtype=np.uint64)
    mixed = mix32(words)
    assert [mix32(int(w)) for w in words[:200]] == [int(v) for v in mixed[:200]]
    assert [spec_mix32(int(w)) for w in words[:200]] == [int(v) for v in mixed[:200]]
    assert len(np.unique(mixed)) == len(np.unique(words))


def test_bounded_draws_follow_the_rejection_spec_over_many_seeds():
    rng = np.random.default_rng(1)
    for case in range(1000):
        seed, tree = int(rng.integers(0, 1 << 32)), int(rng.integers(0, 1 << 16))
        bounds = [int(b) for b in rng.choice([1, 2, 3, 7, 8, 9, 150, 2126, 65535, 65537], size=6)]
        words = spec_stream(seed, tree, 400)
        expected, position = [], 0
        for bound in bounds:
            value, used = spec_integer(words[position:], bound)
            expected.append(value)
            position += used
        generator = TreeRandom(seed, tree)
        assert list(generator.integers_each(bounds)) == expected, case
        assert generator.position == position


def test_vectorised_draws_equal_one_at_a_time():
    for bound in (1, 2, 5, 150, 1 << 15, (1 << 15) + 1):
        batch = TreeRandom(9, 4)
        single = TreeRandom(9, 4)
        values = batch.integers(bound, 3000)
        assert list(values) == [single.integer(bound) for _ in range(3000)]
        assert batch.position == single.position
        assert values.min() >= 0 and values.max() < bound


@pytest.mark.parametrize("bound", [3, 10, 150, 1000])
def test_draws_are_uniform(bound):
    values = TreeRandom(2026, 11).integers(bound, 200 * bound)
    counts = np.bincount(values, minlength=bound)
    assert stats.chisquare(counts).pvalue > 1e-4


def test_trees_of_one_forest_get_unrelated_streams():
    streams = np.array([TreeRandom(5, tree).raw(256) for tree in range(64)])
    # No shared words between trees beyond chance (2**32 possible words).
    assert len(np.unique(streams)) >= streams.size - 2
    keys = {tree_stream_key(5, tree) for tree in range(1000)}
    assert len(keys) == 1000
    assert all(gamma % 2 == 1 for _, gamma in keys)


def test_bound_mask():
    assert [bound_mask(b) for b in (1, 2, 3, 4, 5, 8, 9, 65535, 65536)] == \
        [0, 1, 3, 3, 7, 7, 15, 65535, 65535]


@pytest.mark.parametrize("seed, tree, error, text", [
    (-1, 0, ValueError, r"seed must be in \[0, 4294967295\], not -1"),
    (1 << 32, 0, ValueError, "seed must be in"),
    (0, 1 << 32, ValueError, "tree_index must be in"),
    (1.5, 0, TypeError, "seed must be an integer"),
])
def test_bad_seeds_are_refused(seed, tree, error, text):
    with pytest.raises(error, match=text):
        TreeRandom(seed, tree)


@pytest.mark.parametrize("bound", [0, -3, 1 << 32])
def test_bad_bounds_are_refused(bound):
    with pytest.raises(ValueError, match=f"bound must be in \\[1, 4294967295\\], not {bound}"):
        TreeRandom(0, 0).integer(bound)
