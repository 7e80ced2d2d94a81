"""Cost of the regularised-ELM model-selection algorithms (seed 002 ch. 3, Table 3.1):
wall time of each algorithm against N and against L_max, beside the seed's operation
counts and the peers hpelm and scikit-elm.

``python -m sw.experiments.elm_cost [--quick] [--budget 30] [--no-peers] [--out results]``

Two sweeps over the seed's grid (40 L values up to L_max = a sqrt(N), 30 C values
2^-14 .. 2^15, 10 folds), one BLAS thread, on Friedman #1 regression data
(``sklearn.datasets.make_friedman1``, d = 10; the seed names no dataset for its timing
runs):

1. against N at a = 2 (the seed's Figs 3.6-3.7 axis);
2. against L_max at fixed N with a = 2, 4, 6 (the seed's three settings, Figs 3.6-3.10).

Each algorithm's time is one run (best of three when under three seconds). An algorithm whose
time predicted from its previous size (measured time x the ratio of its Table 3.1
operation counts) exceeds ``--budget`` seconds is not run at that size and is marked
"skip". The seed's counts and ranking live in :data:`SEED`.

Peers, timed on the same hidden layer and targets where they do the same job:
``hpelm.ELM`` with ``norm = 1/C`` trained with "LOO" and with "CV" (k = 10) once per C
(each searches L over its own pruning order with a bisection of about ten sizes, not the
40-value grid), and scikit-elm's in-memory ``ELMRegressor`` refitted per (L, fold) for one C
(the naive refit; its time for the 30 C values is that x 30, marked as extrapolated).

Writes ``elm_cost.md``, ``elm_cost.csv`` and ``elm_cost.png`` in ``--out``.
"""

import argparse
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import make_friedman1
from threadpoolctl import threadpool_limits
from tqdm import tqdm

from sw.experiments.report import markdown, pyplot, results_dir, save_plot, write_csv
from sw.methods.elm import selection as sel
from sw.methods.elm.hidden import MinMaxInputs, RandomHiddenLayer

__all__ = ["SEED", "seed_operations", "time_algorithms", "main"]

_SEED_FILE = "shared/seeds/002_1c5d4f45dcf2e9ea.txt"

#: The seed's published cost model: Table 3.1's overall operation counts (L = L_max,
#: dL = delta L, 30 C values and 10 folds as printed) with the line of each row, and
#: its measured ranking (figures only, no numbers in the text).
SEED = {
    "file": _SEED_FILE,
    "table_3_1": {
        "cv_cholesky": ("L^2N + (L^3N/3 + 15L^2N + 25L^4 + 100L^3)/dL", 1158,
                        lambda L, N, d: L**2 * N + (L**3 * N / 3 + 15 * L**2 * N
                                                    + 25 * L**4 + 100 * L**3) / d),
        "hat_cholesky": ("L^2N + (30L^3N/3 + 10L^2N)/dL + 20L^3", 1159,
                         lambda L, N, d: L**2 * N + (10 * L**3 * N + 10 * L**2 * N) / d
                         + 20 * L**3),
        "cv_svd": ("(40L^3N/3 + 25L^2N + 25L^4 + 100L^3)/dL", 1160,
                   lambda L, N, d: (40 * L**3 * N / 3 + 25 * L**2 * N + 25 * L**4
                                    + 100 * L**3) / d),
        "hat_svd": ("(4L^3N/3 + 30L^2N + 5L^4/2 + 10L^3)/dL", 1161,
                    lambda L, N, d: (4 * L**3 * N / 3 + 30 * L**2 * N + 2.5 * L**4
                                     + 10 * L**3) / d),
        "hat_qr_svd": ("2L^2N + (L^3N/3 + 45L^2N + 5L^4/2)/dL", 1162,
                       lambda L, N, d: 2 * L**2 * N + (L**3 * N / 3 + 45 * L**2 * N
                                                       + 2.5 * L**4) / d),
        "hat_evd": ("L^2N + (L^3N/3 + 30L^2N + L^4 + 15L^3)/dL", 1163,
                    lambda L, N, d: L**2 * N + (L**3 * N / 3 + 30 * L**2 * N + L**4
                                                + 15 * L**3) / d),
        "cv_evd": ("2L^2N + (15L^2N + 10L^4 + 100L^3)/dL", 1164,
                   lambda L, N, d: 2 * L**2 * N + (15 * L**2 * N + 10 * L**4
                                                   + 100 * L**3) / d),
    },
    # Not in Table 3.1: our count of the naive L -> C -> fold refit (30 C x 10 folds, a
    # Gram of 0.9 N rows and a Cholesky per fit, L_j summed as the seed's series).
    "naive_cv_ours": lambda L, N, d: 300 * (0.9 * N * L**3 / 3 + L**4 / 12) / d,
    "ranking": {
        "slowest": ("cv_svd", 1194), "fastest": ("cv_evd", 1194),
        "classes": ({"slow": ("hat_cholesky", "cv_svd"), "fast": ("hat_svd",),
                     "fast & scalable": ("cv_cholesky", "hat_qr_svd", "hat_evd", "cv_evd")},
                    1170),
        "a=6 second fastest": ("hat_qr_svd, slightly below hat_evd", 1205),
    },
}

_ORDER = ("cv_cholesky", "hat_cholesky", "cv_svd", "hat_svd", "hat_qr_svd", "hat_evd",
          "cv_evd", "naive_cv")
_PEERS = ("hpelm_loo", "hpelm_cv", "skelm_naive")


def seed_operations(algorithm, l_max, n, steps=sel.DEFAULT_L_STEPS):
    """Table 3.1's operation count of ``algorithm`` at L_max, N, delta L = L_max / steps
    (our own count for "naive_cv")."""
    formula = (SEED["naive_cv_ours"] if algorithm == "naive_cv"
               else SEED["table_3_1"][algorithm][2])
    return float(formula(float(l_max), float(n), l_max / steps))


def _problem(n, factor, steps, seed=0):
    X, y = make_friedman1(n, noise=1.0, random_state=seed)
    X = MinMaxInputs().fit(X).transform(X)
    Ls = sel.l_grid(n, factor, steps)
    layer = RandomHiddenLayer(X.shape[1], int(Ls[-1]), seed)
    return X, y, Ls, layer


def _timed(run, repeat):
    start = time.perf_counter()
    outcome = run()
    elapsed = time.perf_counter() - start
    if repeat and elapsed < 3.0:
        for _ in range(2):
            start = time.perf_counter()
            run()
            elapsed = min(elapsed, time.perf_counter() - start)
    return elapsed, outcome


def _peer_runs(X, y, Ls, layer, folds):
    """name -> (callable, multiplier): the peers' jobs on this problem."""
    import hpelm
    from skelm import ELMRegressor
    W, B, L_max = -layer.weights, -layer.biases, int(Ls[-1])

    def hpelm_run(how):
        for C in sel.C_GRID:
            elm = hpelm.ELM(X.shape[1], 1, norm=1.0 / C)
            elm.add_neurons(L_max, "sigm", W=W, B=B)
            if how == "CV":
                elm.train(X, y[:, None], "CV", k=10)
            else:
                elm.train(X, y[:, None], "LOO")

    def skelm_run():
        C = float(sel.C_GRID[len(sel.C_GRID) // 2])
        rows = np.arange(len(y))
        for L in Ls:
            for fold in folds:
                rest = np.setdiff1d(rows, fold)
                model = ELMRegressor(alpha=1.0 / C, n_neurons=int(L), ufunc="sigm",
                                     random_state=0).fit(X[rest], y[rest])
                model.predict(X[fold])

    return {"hpelm_loo": (lambda: hpelm_run("LOO"), 1),
            "hpelm_cv": (lambda: hpelm_run("CV"), 1),
            "skelm_naive": (skelm_run, len(sel.C_GRID))}


def time_algorithms(points, budget, peers=True, progress=True, steps=sel.DEFAULT_L_STEPS,
                    repeat=True):
    """Time every algorithm (and the peers) at each (sweep, N, a) of ``points`` over
    ``steps`` L values and the 30 C values; returns the CSV rows. ``budget``: seconds
    above which a predicted run is skipped; ``repeat``: best of three under three seconds."""
    rows, last = [], {}
    bar = tqdm(total=len(points) * (len(_ORDER) + (len(_PEERS) if peers else 0)),
               disable=not progress, desc="elm_cost")
    for sweep, n, factor in points:
        X, y, Ls, layer = _problem(n, factor, steps)
        H = layer.transform(X)
        folds = sel.make_folds(n, sel.DEFAULT_FOLDS, seed=1)
        l_max = int(Ls[-1])
        jobs = {name: (lambda name=name: sel.select(H, y, Ls, sel.C_GRID, name, folds), 1)
                for name in _ORDER}
        if peers:
            jobs.update(_peer_runs(X, y, Ls, layer, folds))
        for name, (run, multiplier) in jobs.items():
            ops = seed_operations(name, l_max, n, steps) if name in _ORDER else None
            row = {"sweep": sweep, "n": n, "a": factor, "l_max": l_max, "l_steps": len(Ls),
                   "algorithm": name,
                   "seed_number": sel.SEED_NUMBER.get(name), "seed_operations": ops}
            key = (sweep, name)
            predicted = None
            if key in last:
                old_seconds, old_ops, old_n, old_l = last[key]
                scale = (ops / old_ops if ops else (n / old_n) * (l_max / old_l) ** 3)
                predicted = old_seconds * scale
            if predicted is not None and predicted > budget:
                row.update(seconds=None, status=f"skip (predicted {predicted:.0f} s)")
            else:
                with threadpool_limits(1), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    seconds, outcome = _timed(run, repeat)
                seconds *= multiplier
                last[key] = (seconds, ops, n, l_max)
                row.update(seconds=seconds,
                           status="extrapolated x30 from one C" if multiplier > 1 else "run")
                if isinstance(outcome, sel.Selection):
                    row.update(chosen_l=outcome.n_hidden, chosen_c=outcome.C,
                               best_score=float(outcome.scores.min()))
            rows.append(row)
            bar.update()
    bar.close()
    return rows


def _rank(values):
    """1 = smallest, over the non-None entries of a dict."""
    present = sorted((v, k) for k, v in values.items() if v is not None)
    return {k: i + 1 for i, (_, k) in enumerate(present)}


def _sweep_table(rows, sweep):
    sub = [row for row in rows if row["sweep"] == sweep]
    columns = sorted({(row["n"], row["a"], row["l_max"]) for row in sub})
    names = [name for name in _ORDER + _PEERS if any(r["algorithm"] == name for r in sub)]
    label = "N={n}, a={a:g}, L_max={l}"
    header = ["algorithm (seed #)"] + [label.format(n=n, a=a, l=l) for n, a, l in columns]
    cell = {(r["algorithm"], r["n"], r["a"]): r for r in sub}
    body = []
    for name in names:
        number = sel.SEED_NUMBER.get(name)
        line = [f"{name} ({number})" if number else name]
        for n, a, _ in columns:
            row = cell.get((name, n, a))
            if row is None:
                line.append("")
            elif row["seconds"] is None:
                line.append("skip")
            else:
                mark = " (x30)" if row["status"].startswith("extrapolated") else ""
                line.append(f"{row['seconds']:.3g}{mark}")
        body.append(line)
    n, a, l_max = columns[-1]
    steps = sub[0]["l_steps"]
    measured = _rank({name: cell[(name, n, a)]["seconds"] for name in _ORDER
                      if (name, n, a) in cell})
    predicted = _rank({name: seed_operations(name, l_max, n, steps) for name in _ORDER[:-1]})
    ranks = [[name, str(predicted.get(name, "")), str(measured.get(name, "skip")),
              f"{seed_operations(name, l_max, n, steps):.3g}"] for name in _ORDER[:-1]]
    rank_table = markdown([f"algorithm (at N={n}, a={a:g})", "Table 3.1 rank", "measured rank",
                           "Table 3.1 operations"], ranks)
    return markdown(header, body), rank_table


def _agreement(rows):
    """Per (sweep, N, a): do the algorithms of each family choose the same (L, C)?"""
    lines = []
    for key in sorted({(r["sweep"], r["n"], r["a"]) for r in rows}):
        sub = [r for r in rows if (r["sweep"], r["n"], r["a"]) == key and "chosen_l" in r]
        for family, names in (("HAT", sel.HAT_ALGORITHMS), ("CV", sel.CV_ALGORITHMS)):
            picks = {(r["chosen_l"], r["chosen_c"]) for r in sub if r["algorithm"] in names}
            if picks:
                lines.append(f"- {key[0]} N={key[1]} a={key[2]:g} {family}: "
                             f"{'same (L, C) = ' + str(next(iter(picks))) if len(picks) == 1 else 'DIFFERENT ' + str(sorted(picks))}")
    return "\n".join(lines)


def _plot(rows, path):
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    colours = dict(zip(_ORDER + _PEERS, plt.get_cmap("tab20").colors[::2]
                       + plt.get_cmap("tab20").colors[1::2]))
    for axis, sweep, x_key, x_label in ((axes[0], "n", "n", "N (a = 2)"),
                                        (axes[1], "l", "l_max", "L_max (fixed N)")):
        for name in _ORDER + _PEERS:
            points = sorted((r[x_key], r["seconds"]) for r in rows if r["sweep"] == sweep
                            and r["algorithm"] == name and r["seconds"] is not None)
            if points:
                xs, ys = zip(*points)
                number = sel.SEED_NUMBER.get(name)
                peer = name in _PEERS
                axis.plot(xs, ys, "--" if peer else "-", marker="s" if peer else "o",
                          color=colours[name], label=f"{number}. {name}" if number else name)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel(x_label)
        axis.set_ylabel("model-selection time, s (1 thread)")
        axis.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.suptitle(f"ELM model selection over {rows[0]['l_steps']} L x 30 C "
                    f"(seed 002 Table 3.1 algorithms)")
    figure.tight_layout()
    save_plot(figure, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    parser.add_argument("--budget", type=float, default=None,
                        help="skip a run predicted to take longer (s; default 30, quick 1)")
    parser.add_argument("--no-peers", action="store_true", help="leave hpelm, scikit-elm out")
    parser.add_argument("--out", default="results")
    arguments = parser.parse_args(argv)
    if arguments.quick:
        n_values, l_n, factors, budget, steps = (100, 200), 200, (4.0,), 1.0, 8
    else:
        n_values, l_n, factors, budget, steps = ((1000, 2000, 4000, 8000, 16000), 4000,
                                                 (2.0, 4.0, 6.0), 30.0, sel.DEFAULT_L_STEPS)
    budget = arguments.budget if arguments.budget is not None else budget
    points = [("n", n, 2.0) for n in n_values] + [("l", l_n, a) for a in factors]
    rows = time_algorithms(points, budget, peers=not arguments.no_peers, steps=steps,
                           repeat=not arguments.quick)
    out = results_dir(arguments.out)
    write_csv(rows, out / "elm_cost.csv")
    _plot(rows, out / "elm_cost.png")
    n_table, n_rank = _sweep_table(rows, "n")
    l_table, l_rank = _sweep_table(rows, "l")
    text = (f"# ELM model-selection cost (seed 002 ch. 3, Table 3.1)\n\n"
            f"Seconds for the whole grid ({steps} L x 30 C), one BLAS thread; 'skip': predicted "
            f"over {budget:g} s; (x30): measured for one C, times 30.\n\n"
            f"## Against N (a = 2)\n\n{n_table}\n\n{n_rank}\n\n"
            f"## Against L_max (N = {l_n})\n\n{l_table}\n\n{l_rank}\n\n"
            f"## Same choice within each family\n\n{_agreement(rows)}\n")
    (out / "elm_cost.md").write_text(text)
    print(text)
    print(f"wrote {out / 'elm_cost.md'}, {out / 'elm_cost.csv'}, {out / 'elm_cost.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
