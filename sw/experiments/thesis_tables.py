"""The thesis's reported numbers, as data: the only home of every number the project
puts beside its own (Tables 4.1, 4.2 and 4.3 here; Table 3.1 of the metric learning).

Source: Parisa Abdolrahim Poorheravi, *Software and FPGA-Based Hardware to Accelerate
Machine Learning Classifiers*, MASc thesis, University of Waterloo, 2022, section 4.7-4.8,
Table 4.1 (datasets) and Table 4.2 ("Comparing accuracies and run time of the proposed
hardware implementation and Scikit-learn random forest"); transcribed in the project's
notes (``shared/notes/thesis_tables.md``) and checked against the thesis text.

Set-up stated there: 250 trees of depth 4, "5x cross validation", datasets split about
70/30 with test subsets a multiple of 16, an Intel Arria 10 10AX115N3F45I2SG clocked at
100 MHz (Quartus Prime Pro 20.0, simulated in ModelSim), software on an Intel Core i7 @
3.00 GHz ("Scikit-learn random forest"). The thesis's hardware accuracy is that of its
thesis-mode design; its time column does not say whether data transfer is included.
"""

from sw.methods.forest.estimator import MODE_DEFAULTS

__all__ = ["CITATION", "SETUP", "THESIS_TABLE_4_2", "THESIS_TABLE_4_3", "THESIS_TABLE_3_1", "THESIS_CLOCK_HZ",
           "THESIS_TREES", "THESIS_DEPTH", "THESIS_SKLEARN", "THESIS_AVERAGE_SPEEDUP", "thesis_row"]

CITATION = ("P. Abdolrahim Poorheravi, \"Software and FPGA-Based Hardware to Accelerate Machine "
            "Learning Classifiers\", MASc thesis, University of Waterloo, 2022, Table 4.2")

SETUP = ("250 trees, depth 4, 5-fold CV, Arria 10 10AX115N3F45I2SG at 100 MHz; "
         "scikit-learn on a Core i7 @ 3.00 GHz")

THESIS_CLOCK_HZ = 100_000_000
#: The thesis design's trees and depth are the estimator's thesis-mode values.
THESIS_TREES = MODE_DEFAULTS["thesis"]["n_estimators"]
THESIS_DEPTH = MODE_DEFAULTS["thesis"]["max_depth"]
#: scikit-learn set-up of the thesis's software column (Table 4.2: 250 trees, depth 4).
THESIS_SKLEARN = {"n_estimators": THESIS_TREES, "max_depth": THESIS_DEPTH}
#: "The run time of the proposed method is on average 50x faster than the software" (4.8.1).
THESIS_AVERAGE_SPEEDUP = 50

#: Table 4.2 (and Table 4.1's size and classes), keyed by this project's dataset names.
#: ``hw_*`` = the thesis's FPGA design, ``sklearn_*`` = its scikit-learn baseline.
THESIS_TABLE_4_2 = {
    "iris": {"title": "Fisher Iris", "size": "150x4", "classes": 3,
             "hw_accuracy": 86.0, "sklearn_accuracy": 96.25, "hw_ms": 29.64, "sklearn_ms": 1710.24},
    "sonar": {"title": "Sonar", "size": "208x60", "classes": 2,
              "hw_accuracy": 53.0, "sklearn_accuracy": 71.25, "hw_ms": 37.23, "sklearn_ms": 2099.39},
    "breast_cancer_coimbra": {"title": "Breast Cancer Coimbra", "size": "116x10", "classes": 2,
                              "hw_accuracy": 59.0, "sklearn_accuracy": 76.25, "hw_ms": 37.7,
                              "sklearn_ms": 1732.03},
    "heart_failure": {"title": "Heart Failure", "size": "299x13", "classes": 2,
                      "hw_accuracy": 75.0, "sklearn_accuracy": 86.25, "hw_ms": 38.56,
                      "sklearn_ms": 1846.68},
    "cmc": {"title": "Contraceptive (CMC)", "size": "1473x9", "classes": 3,
            "hw_accuracy": 49.0, "sklearn_accuracy": 51.25, "hw_ms": 37.91, "sklearn_ms": 2192.42},
    "ctg": {"title": "Cardiotocography (CTG)", "size": "2126x23", "classes": 3,
            "hw_accuracy": 74.0, "sklearn_accuracy": 98.75, "hw_ms": 38.08, "sklearn_ms": 3336.08},
}


def thesis_row(name):
    """Table 4.2's numbers for dataset ``name`` plus its speed-up, or None if not in the table."""
    row = THESIS_TABLE_4_2.get(name)
    if row is None:
        return None
    return {**row, "speedup": row["sklearn_ms"] / row["hw_ms"]}


#: Table 4.3, single PE utilisation (``shared/notes/thesis_tables.md``).
THESIS_TABLE_4_3 = [
    {"design": "thesis PE", "registers": 3420, "memory_kbits": 9152, "dsp": 497},
    {"design": "task parallelism (Cheng et al.)", "registers": 4596, "memory_kbits": 4102, "dsp": 9},
]


#: Table 3.1 (metric learning): (accuracy %, time s) per dataset, approach and miner;
#: None = "-".
_TABLE_3_1_MINERS = ("batch_all", "batch_hard", "batch_semi_hard", "hpen", "epen", "ephn",
          "negative_sampling")


def _row(accuracies, times):
    return {m: (a, t) for m, a, t in zip(_TABLE_3_1_MINERS, accuracies, times)}


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
