"""Writing results shared by the experiments: the results folder, Markdown tables, CSV
files and PNG plots."""

import csv
from pathlib import Path

#: The folder every experiment writes to unless told otherwise (``--out``).
RESULTS = "results"


def results_dir(out=RESULTS):
    """The output folder ``out`` as a path, created if missing."""
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    return path


def markdown(header, body, pad=True):
    """A Markdown table of string cells; ``pad``: columns padded to one width (readable as
    plain text too), else the cells as they are under a ``|---|`` rule."""
    if not pad:
        line = lambda cells: "| " + " | ".join(cells) + " |"
        return "\n".join([line(header), "|" + "|".join("---" for _ in header) + "|",
                          *map(line, body)])
    widths = [max(len(cell) for cell in column) for column in zip(header, *body)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *map(line, body)])


def write_csv(rows, path):
    """Rows (dicts) as CSV: the columns of every row in order of appearance, floats to 6
    significant digits, None as empty."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: ("" if row.get(key) is None else
                                   f"{row[key]:.6g}" if isinstance(row.get(key), float) else row.get(key))
                             for key in columns})


def pyplot():
    """``matplotlib.pyplot`` drawing to files only (the Agg backend)."""
    # Imported here: matplotlib is slow to import and only needed when a plot is drawn.
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_plot(figure, path, dpi=110):
    """Save ``figure`` as a PNG at ``path`` and close it."""
    figure.savefig(path, dpi=dpi)
    pyplot().close(figure)
