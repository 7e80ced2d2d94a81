"""Quantisers: the host-side map from real-valued features to the hardware's unsigned codes.

The hardware only ever sees ``code_bits``-bit unsigned codes and class labels. A quantiser
is fitted on the training features and then maps any input to codes. Both quantisers are
defined by an ascending array of *edges* per feature::

    code(x) = number of edges strictly below x

so that for every real x and every code c, ``code(x) <= c`` holds exactly when
``x <= edge[c]``. This is what lets the exporter turn a hardware threshold code back into
a real-valued scikit-learn threshold with identical decisions on every input.

Inputs are first rounded to float32 and compared in float64, which is exactly what
scikit-learn's trees do (they store X as float32 and thresholds as float64), so the
exported forest sees the same numbers as the model.

``"rank"``
    Per feature, the sorted distinct training values u_0 < u_1 < ... < u_{k-1}. With
    k <= 2**code_bits the edges are the midpoints e_i = (u_i + u_{i+1}) / 2 (as
    scikit-learn's thresholds; when the midpoint rounds up to u_{i+1} it is replaced by
    u_i, again as scikit-learn does), so training values get the codes 0..k-1 and the
    quantiser is lossless for training. With more distinct values, 2**code_bits - 1
    edges are taken at equal steps through the distinct values (quantile bins over the
    distinct values): edge i is the midpoint below the distinct value of index
    floor((i + 1) * k / 2**code_bits).
``"fixed"``
    The thesis's linear fixed-point scaling: per feature, lo = min and hi = max of the
    training values, step = (hi - lo) / (2**code_bits - 1) (step = 1 for a constant
    feature), code = round((x - lo) / step) clipped to [0, 2**code_bits - 1], with the
    rounding defined through the edges e_c = lo + (c + 0.5) * step,
    c = 0 .. 2**code_bits - 2 (a value exactly on an edge rounds down).
"""

import numpy as np

from sw.methods.params import check_integer

__all__ = ["QUANTIZER_KINDS", "MAX_CODE_BITS", "RankQuantizer", "FixedQuantizer",
           "make_quantizer", "as_float32_grid"]

QUANTIZER_KINDS = ("rank", "fixed")
#: Codes are held in uint32 by the model.
MAX_CODE_BITS = 32


def as_float32_grid(X):
    """Round features to float32 and return them as float64 (scikit-learn's tree input).

    Raises ``ValueError`` for values that are not finite after rounding (NaN, inf, or
    magnitudes above float32's maximum, about 3.4e38).
    """
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(over="ignore"):
        rounded = X.astype(np.float32)
    bad = ~np.isfinite(rounded)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise ValueError(
            f"feature {column} of row {row} is {X[row, column]!r}: features must be finite "
            f"and at most {float(np.finfo(np.float32).max):.4g} in magnitude (float32)")
    return rounded.astype(np.float64)


def _check_code_bits(code_bits):
    return check_integer("code_bits", code_bits, 1, MAX_CODE_BITS)


def _midpoints(lower, upper):
    """scikit-learn's threshold between two consecutive distinct values."""
    middle = lower / 2.0 + upper / 2.0
    # A midpoint that rounds onto the upper value would send it left: use the lower one.
    return np.where((middle == upper) | ~np.isfinite(middle), lower, middle)


class _Quantizer:
    """Common part: per-feature edges, codes by counting edges below a value."""

    kind = None

    def __init__(self, code_bits=16):
        self.code_bits = _check_code_bits(code_bits)
        self.n_codes = 1 << self.code_bits

    def fit(self, X):
        """Fit on training features ``X`` (n_rows x n_features, real); returns self."""
        X = as_float32_grid(X)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D array, not shape {X.shape}")
        self.n_features = X.shape[1]
        self._fit(X)
        return self

    def transform(self, X):
        """Codes of ``X`` as a uint32 array of the same shape, each in [0, 2**code_bits)."""
        X = as_float32_grid(X)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have {self.n_features} features, not shape {X.shape}")
        codes = np.empty(X.shape, dtype=np.uint32)
        for feature in range(self.n_features):
            codes[:, feature] = self._codes_of(feature, X[:, feature])
        return codes

    def fit_transform(self, X):
        return self.fit(X).transform(X)

    def threshold_value(self, feature, code):
        """The real threshold t with ``code(x) <= code  <=>  x <= t`` (float64).

        ``code`` may be an array; codes at or above the last code map to +inf.
        """
        raise NotImplementedError


class RankQuantizer(_Quantizer):
    """Order-preserving codes with midpoint edges; lossless up to 2**code_bits distinct values."""

    kind = "rank"

    def _fit(self, X):
        self.edges_ = []
        for feature in range(X.shape[1]):
            distinct = np.unique(X[:, feature])
            if len(distinct) <= self.n_codes:
                edges = _midpoints(distinct[:-1], distinct[1:])
            else:
                above = ((np.arange(1, self.n_codes, dtype=np.int64) * len(distinct))
                         // self.n_codes)
                edges = _midpoints(distinct[above - 1], distinct[above])
            self.edges_.append(edges)

    def _codes_of(self, feature, values):
        return np.searchsorted(self.edges_[feature], values, side="left")

    def threshold_value(self, feature, code):
        edges = self.edges_[feature]
        code = np.asarray(code, dtype=np.int64)
        padded = np.append(edges, np.inf)
        return padded[np.minimum(code, len(edges))]


class FixedQuantizer(_Quantizer):
    """The thesis's linear fixed-point scaling to code_bits bits (round to nearest)."""

    kind = "fixed"

    def _fit(self, X):
        self.low_ = X.min(axis=0)
        high = X.max(axis=0)
        step = (high - self.low_) / (self.n_codes - 1)
        self.step_ = np.where(step > 0, step, 1.0)

    def _edge(self, feature, code):
        return self.low_[feature] + (np.asarray(code, dtype=np.float64) + 0.5) * self.step_[feature]

    def _codes_of(self, feature, values):
        last = self.n_codes - 1
        with np.errstate(over="ignore", invalid="ignore"):
            estimate = np.floor((values - self.low_[feature]) / self.step_[feature] + 0.5)
        codes = np.clip(np.nan_to_num(estimate, nan=0.0), 0, last).astype(np.int64)
        # The division above may be off by one near an edge; the edges are the definition.
        for _ in range(2):
            down = (codes > 0) & (self._edge(feature, codes - 1) >= values)
            codes -= down
            up = (codes < last) & (self._edge(feature, codes) < values)
            codes += up
        return codes

    def threshold_value(self, feature, code):
        code = np.asarray(code, dtype=np.int64)
        return np.where(code >= self.n_codes - 1, np.inf, self._edge(feature, code))


def make_quantizer(kind, code_bits):
    """A new, unfitted quantiser of the given kind ("rank" or "fixed")."""
    if kind == "rank":
        return RankQuantizer(code_bits)
    if kind == "fixed":
        return FixedQuantizer(code_bits)
    raise ValueError(f"quantizer must be one of {QUANTIZER_KINDS}, not {kind!r}")
