"""The host library's methods beside the hardware forest (``make baselines``): every method
of :data:`sw.experiments.baselines.methods.METHODS` on the same repeated stratified folds of
each dataset; accuracy (mean, spread, difference to the hardware forest with its standard
error) and single-core fit time, as ``results/baselines.{md,csv,png}``."""
