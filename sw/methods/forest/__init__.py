"""The hardware random forest: estimator, golden model, per-tree generator, quantisers."""
