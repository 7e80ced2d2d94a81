"""Every learning method of the host library, one package per family, all of one shape
(estimator, its model, its helpers): ``forest`` (the hardware random forest) and
``metric`` (large-margin metric learning, thesis ch. 3)."""

from sw.methods.forest.estimator import HardwareForestClassifier
from sw.methods.metric.estimator import LargeMarginMetricLearning

__all__ = ["HardwareForestClassifier", "LargeMarginMetricLearning"]
