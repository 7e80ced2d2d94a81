"""The STATUS flags the host decodes are the ones the register map documents and the hardware builds."""

import re

from hw.system import REGISTERS
from sim.host.errors import STATUS_BITS, STATUS_MEANINGS, decode_status, explain
from sim.runner import PROJECT_ROOT


def test_status_bits_are_in_the_documented_order():
    row = next(line for line in (PROJECT_ROOT / "docs" / "registers.md").read_text().splitlines()
               if line.startswith("| `STATUS` |"))
    text = row.split("|")[5]
    documented = {int(bit): name.strip().replace(" ", "_")
                  for bit, name in re.findall(r"(\d+) ([a-z_ ]+?)(?=,| \(|\s*$)", text)}
    assert [documented[bit] for bit in sorted(documented)] == list(STATUS_BITS)
    assert REGISTERS["STATUS"][2] == len(STATUS_BITS)          # the register's width


def test_every_error_flag_has_a_meaning_and_is_decoded_from_its_bit():
    assert set(STATUS_MEANINGS) <= set(STATUS_BITS) - {"busy", "done", "inference_idle"}
    status = decode_status(1 << STATUS_BITS.index("depth_exceeded") | 1)
    assert status["depth_exceeded"] == 1 and status["busy"] == 1 and status["tree_error"] == 0
    assert explain(status, ["tree_error", "depth_exceeded"]) == [
        f"STATUS.depth_exceeded ({STATUS_MEANINGS['depth_exceeded']})"]
