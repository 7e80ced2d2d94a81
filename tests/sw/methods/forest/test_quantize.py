"""Quantisers: order preservation, losslessness, and exact threshold round trips."""

import numpy as np
import pytest

from sw.methods.forest.quantize import FixedQuantizer, RankQuantizer, make_quantizer


@pytest.mark.parametrize("kind", ["rank", "fixed"])
@pytest.mark.parametrize("code_bits", [3, 16])
def test_code_at_most_c_iff_value_at_most_threshold(kind, code_bits):
    rng = np.random.default_rng(code_bits)
    train = np.column_stack([rng.normal(size=200), rng.integers(0, 5, 200), np.full(200, 2.5)])
    quantizer = make_quantizer(kind, code_bits).fit(train)
    probe = np.vstack([train, rng.normal(scale=3, size=(300, 3)),
                       np.array([[-1e30, 1e30, 2.5]])])
    codes = quantizer.transform(probe)
    assert codes.max() < 2 ** code_bits
    probe32 = probe.astype(np.float32).astype(np.float64)
    for feature in range(3):
        for code in np.unique(codes[:, feature]):
            threshold = quantizer.threshold_value(feature, code)
            assert np.array_equal(codes[:, feature] <= code, probe32[:, feature] <= threshold)


def test_rank_is_lossless_and_order_preserving():
    values = np.array([[0.5], [-2.0], [0.5], [7.25], [3.0]])
    codes = RankQuantizer(16).fit_transform(values)
    assert codes[:, 0].tolist() == [1, 0, 1, 3, 2]
    # Edges are scikit-learn's midpoints.
    assert RankQuantizer(16).fit(values).threshold_value(0, 1) == pytest.approx(1.75)


def test_rank_more_distinct_values_than_codes_gives_quantile_bins():
    values = np.arange(100, dtype=float)[:, None]
    codes = RankQuantizer(2).fit_transform(values)[:, 0]
    assert codes.tolist() == [0] * 25 + [1] * 25 + [2] * 25 + [3] * 25


def test_fixed_is_linear_scaling():
    values = np.array([[0.0], [1.0], [0.5], [0.26]])
    codes = FixedQuantizer(2).fit_transform(values)[:, 0]  # step 1/3, round to nearest
    assert codes.tolist() == [0, 3, 1, 1]


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e39])
def test_non_finite_values_are_rejected(bad):
    with pytest.raises(ValueError, match="row 1"):
        RankQuantizer(8).fit(np.array([[0.0], [bad]]))


def test_bad_code_bits():
    with pytest.raises(ValueError, match=r"code_bits must be in \[1, 32\], not 40"):
        RankQuantizer(40)
    with pytest.raises(ValueError, match="quantizer must be one of"):
        make_quantizer("log", 8)
