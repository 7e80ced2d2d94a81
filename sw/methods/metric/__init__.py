"""Large-margin metric learning with triplet mining and the hierarchical approach.

Thesis chapter 3 (Table 3.1).  The estimator is :class:`LargeMarginMetricLearning`;
the miners are in :mod:`sw.methods.metric.mining`, the solvers in :mod:`sw.methods.metric.solvers`, the
hierarchical schedule in :mod:`sw.methods.metric.hierarchical`, the ``metric-learn`` LMNN peer
adapter in :mod:`sw.methods.metric.peer` and the Table 3.1 reproduction in
:mod:`sw.experiments.metric_table` (``python -m sw.experiments.metric_table --help``).
"""

from .estimator import SOLVERS, LargeMarginMetricLearning
from .hierarchical import hierarchical_schedule
from .mining import MINERS, THESIS_NAMES, canonical_miner_name, mine_triplets

__all__ = ["LargeMarginMetricLearning", "SOLVERS", "MINERS", "THESIS_NAMES",
           "canonical_miner_name", "mine_triplets", "hierarchical_schedule"]
