# Timing constraints for the Arria 10 GX 10AX115N3F45I2SG (Quartus Prime Pro, TimeQuest).
#
# PLACEHOLDER board: the port names below are those Amaranth gives the resources of
# hw/platform.py (resource "clk100" 0 -> port clk100_0__io, and so on), whose pins are
# placeholders (see constraints/arria10_pins.qsf and docs/arria10.md). A real board file
# keeps this clock (or changes the period here and in hw/platform.py together).

# The 100 MHz board clock, which drives the design's sync domain directly (no PLL).
create_clock -name clk100 -period 10.000 [get_ports {clk100_0__io}]

# Jitter and clock uncertainty from the device models.
derive_clock_uncertainty

# The reset push button is asynchronous; it enters the design only through a
# two-stage reset synchronizer (asynchronous assert, synchronous release).
set_false_path -from [get_ports {button_reset_0__io}]

# The LED is a static status output, not a timed interface.
set_false_path -to [get_ports {led_0__io}]
