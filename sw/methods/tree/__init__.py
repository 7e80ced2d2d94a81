"""Seed 001's decision tree family: ``EntropyTreeClassifier`` (the information-gain tree
of its Algorithm 3.1 with the line search over thresholds, :mod:`.entropy`) and
``LDAFeatures`` (its LDA feature generation, section 3.2, :mod:`.lda`)."""

from sw.methods.tree.entropy import EntropyTreeClassifier, entropy, information_gain, line_search
from sw.methods.tree.lda import LDAFeatures

__all__ = ["EntropyTreeClassifier", "LDAFeatures", "entropy", "information_gain", "line_search"]
