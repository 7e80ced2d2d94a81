"""Testbench support: stream drivers, the testbench base, tree and dataset helpers."""
