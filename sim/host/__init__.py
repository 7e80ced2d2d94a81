"""The host driver (register and stream transactions) and the cocotb sessions that run it."""
