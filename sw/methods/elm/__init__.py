"""Extreme learning machines (seed 002, Kokkinos 2016): the regularised ELM with fast model
selection (chapter 3) and the incremental ELMs with their data-parallel fit on Dask
(chapter 4)."""
