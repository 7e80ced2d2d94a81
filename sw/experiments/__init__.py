"""Every command that writes ``results/``: the comparison, accuracy study, benchmarks,
resource fits and the reproductions of the seeds' tables."""
