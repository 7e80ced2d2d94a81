import sys

from sw.experiments.baselines.run import main

sys.exit(main())
