"""The thesis's side of Table 3.1: its datasets, approaches and published numbers."""

__all__ = ["DATASETS", "APPROACHES", "THESIS_TABLE_3_1", "DATASET_TITLES"]

DATASETS = ("iris", "orl_faces", "mnist_3000")
APPROACHES = ("non-hierarchical", "hierarchical")

# Thesis Table 3.1: (accuracy %, time s) per dataset, approach and miner; None = "-".
_ORDER = ("batch_all", "batch_hard", "batch_semi_hard", "hpen", "epen", "ephn",
          "negative_sampling")


def _row(accuracies, times):
    return {m: (a, t) for m, a, t in zip(_ORDER, accuracies, times)}


THESIS_TABLE_3_1 = {
    ("iris", "non-hierarchical"): _row(
        [72.73, 100, 86.36, 95.45, 81.82, 95.45, 72.73],
        [832.85, 5.51, 6.62, 4.77, 5.34, 5.11, 5.06]),
    ("iris", "hierarchical"): _row(
        [100] * 7, [23.73, 9.72, 4.54, 7.25, 4.73, 5.05, 4.64]),
    ("orl_faces", "non-hierarchical"): _row(
        [None, 85.00, 78.75, 72.50, 75.00, 85.00, 77.50],
        [None, 16.13, 18.61, 19.59, 19.19, 16.31, 19.05]),
    ("orl_faces", "hierarchical"): _row(
        [76.25, 76.25, 81.25, 78.75, 78.75, 81.25, 63.75],
        [0.39, 0.93, 0.79, 4.36, 1.07, 0.95, 0.39]),
    ("mnist_3000", "non-hierarchical"): _row(
        [None, 82.00, 79.00, 82.00, 78.00, 82.00, 78.00],
        [None, 122.21, 182.13, 152.89, 173.18, 135.64, 170.33]),
    ("mnist_3000", "hierarchical"): _row(
        [71.00, 77.00, 79.00, 81.00, 75.00, 78.00, 79.00],
        [27.17, 1.56, 1.55, 0.49, 1.02, 1.70, 1.55]),
}

DATASET_TITLES = {"iris": "Iris", "orl_faces": "ORL faces", "mnist_3000": "MNIST 3000",
                  "wine": "Wine"}
