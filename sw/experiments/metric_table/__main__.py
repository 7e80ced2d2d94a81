"""``python -m sw.experiments.metric_table``: see :func:`sw.experiments.metric_table.main`."""

import sys

from sw.experiments.metric_table import main

if __name__ == "__main__":
    sys.exit(main())
