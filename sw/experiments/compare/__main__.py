"""``python -m sw.experiments.compare``: the comparison (:func:`sw.experiments.compare.cli.main`)."""

import sys

from sw.experiments.compare.cli import main

sys.exit(main())
