"""Amaranth gateware of the random-forest training accelerator."""
