"""The thesis's side of Table 3.1: its datasets and approaches (its published numbers are
in :mod:`sw.experiments.thesis_tables`)."""

from sw.experiments.thesis_tables import THESIS_TABLE_3_1

__all__ = ["DATASETS", "APPROACHES", "THESIS_TABLE_3_1", "DATASET_TITLES"]

DATASETS = ("iris", "orl_faces", "mnist_3000")
APPROACHES = ("non-hierarchical", "hierarchical")

DATASET_TITLES = {"iris": "Iris", "orl_faces": "ORL faces", "mnist_3000": "MNIST 3000",
                  "wine": "Wine"}
