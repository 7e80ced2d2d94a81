"""The host side of the accelerator: the driver (register map and sequences), the transports it
runs over, the STATUS flags and their exception, the builds the backend chooses from, and the
cocotb sessions that run the driver for ``sim.backend``."""
