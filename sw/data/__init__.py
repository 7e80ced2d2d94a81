"""Datasets: the thesis's CSVs from ``HWFOREST_DATA_DIR``, a cache or scikit-learn's bundled sets."""
