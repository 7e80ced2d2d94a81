"""EDA flows over the gateware: Verilog, Yosys resources, nextpnr Fmax, the Quartus project.

Gateware (``hw``) never imports these; they import the gateware through ``hw.designs``.
"""
