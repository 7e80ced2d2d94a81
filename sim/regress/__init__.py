"""A random regression of the forest trainer against the golden model, spread over Dask.

``python -m sim.regress --cases N --seed S`` draws N cases (:mod:`sim.regress.cases`),
builds each build shape once (:func:`sim.regress.run.prepare_builds`), runs the cases in
batches on the workers of a Dask cluster (:mod:`sim.regress.cluster`,
:func:`sim.regress.run.run_cases`; each worker only starts the built simulator on
``sim.tb_regress``) and writes ``regress.json`` and ``regress.md``
(:mod:`sim.regress.report`). ``python -m sim.regress --case SEED --shape SHAPE`` reruns
one case alone. See docs/regress.md.
"""
