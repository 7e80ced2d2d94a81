"""Large-margin metric learning with triplet mining and the hierarchical approach.

Thesis chapter 3 (Table 3.1).  The estimator is :class:`LargeMarginMetricLearning`;
the miners are in :mod:`sw.metric.mining`, the solvers in :mod:`sw.metric.solvers`, the
hierarchical schedule in :mod:`sw.metric.hierarchical`, the ``metric-learn`` LMNN peer
adapter in :mod:`sw.metric.peer` and the Table 3.1 reproduction in
:mod:`sw.metric.reproduce` (``python -m sw.metric.reproduce --help``).
"""

from .estimator import SOLVERS, LargeMarginMetricLearning
from .hierarchical import hierarchical_schedule
from .mining import MINERS, THESIS_NAMES, canonical_miner_name, mine_triplets

__all__ = ["LargeMarginMetricLearning", "SOLVERS", "MINERS", "THESIS_NAMES",
           "canonical_miner_name", "mine_triplets", "hierarchical_schedule"]
