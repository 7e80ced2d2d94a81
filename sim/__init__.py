"""cocotb testbenches and the Verilator simulation runner."""
