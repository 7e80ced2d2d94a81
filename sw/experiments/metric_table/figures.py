"""Figures of the Table 3.1 run: ghost faces (thesis Fig. 3.2) and the wine subspace
(Fig. 3.3)."""

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sw.data import datasets
from sw.experiments.metric_table.data import _knn_accuracy
from sw.experiments.report import pyplot, save_plot
from sw.methods.metric.estimator import LargeMarginMetricLearning
from sw.methods.metric.mining import THESIS_NAMES

__all__ = ["ghost_faces_figure", "wine_subspace_figure"]


def ghost_faces_figure(split, models, path, n_faces=10):
    """Top ``n_faces`` columns of L mapped back to pixels, one row per miner (Fig. 3.2)."""
    plt = pyplot()

    figure, axes = plt.subplots(len(models), n_faces, figsize=(n_faces * 0.95, len(models) * 1.25),
                                squeeze=False)
    for row, (label, model) in enumerate(models.items()):
        directions = model.components_[:n_faces] @ split.projection.components_
        for column in range(n_faces):
            axis = axes[row, column]
            if column < len(directions):
                axis.imshow(directions[column].reshape(split.image_shape), cmap="gray")
            axis.set_xticks([])
            axis.set_yticks([])
        axes[row, 0].set_ylabel(label, fontsize=8)
    figure.suptitle("Ghost faces: top ten columns of L on ORL faces (cf. thesis Fig. 3.2)",
                    fontsize=10)
    figure.tight_layout()
    save_plot(figure, path)


def wine_subspace_figure(miners, path, seed, loader=None, k=3, c=10.0):
    """Wine projected on the two leading directions of L for every miner (Fig. 3.3)."""
    plt = pyplot()

    if loader is None:
        loader = datasets.load
    data = loader("wine")
    X_train, X_test, y_train, y_test = train_test_split(
        np.asarray(data.X, dtype=float), np.asarray(data.y), train_size=0.7,
        stratify=data.y, random_state=seed)
    scaler = StandardScaler().fit(X_train)   # features differ in scale by 10^3
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    columns = 4
    rows = -(-len(miners) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 3.0 * rows),
                                squeeze=False)
    for axis, miner in zip(axes.flat, miners):
        model = LargeMarginMetricLearning(mining=miner, k=k, c=c, random_state=seed)
        model.fit(X_train, y_train)
        train_2d, test_2d = model.transform(X_train)[:, :2], model.transform(X_test)[:, :2]
        for label, colour in zip(np.unique(y_train), ("tab:blue", "tab:orange", "tab:green")):
            axis.scatter(*train_2d[y_train == label].T, s=10, c=colour, marker="o",
                         label=f"train {label}")
            axis.scatter(*test_2d[y_test == label].T, s=22, c=colour, marker="x",
                         label=f"test {label}")
        accuracy = _knn_accuracy(model.transform(X_train), y_train, model.transform(X_test),
                                 y_test, 3)
        axis.set_title(f"{THESIS_NAMES[miner]} (3-NN test {100 * accuracy:.1f} %)", fontsize=9)
        axis.tick_params(labelsize=7)
    for axis in list(axes.flat)[len(miners):]:
        axis.axis("off")
    axes.flat[0].legend(fontsize=6, loc="best")
    figure.suptitle("Wine in the two leading dimensions of the metric subspace "
                    "(cf. thesis Fig. 3.3; o train, x test)", fontsize=10)
    figure.tight_layout()
    save_plot(figure, path)
