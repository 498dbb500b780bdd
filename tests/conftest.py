"""pytest set-up shared by every test: Hypothesis draws the same examples on every run (CI included), and tests
marked `shared` (they read ASTRA-sim's Chakra traces from the project's shared/ folder) skip with the reason when
that folder is absent, as in a newcomer's clone."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

SHARED = Path(os.environ.get("FABRICSIM_SHARED") or Path(__file__).resolve().parents[2] / "shared")
"""The project's shared/ folder: beside the checkout (as in CI), or where FABRICSIM_SHARED says (the Makefile
sets it for a clone elsewhere)."""
CHAKRA_TRACES = SHARED / "data" / "chakra"


def pytest_configure(config):
    config.addinivalue_line("markers", "shared: reads ASTRA-sim's Chakra traces from the project's shared/ folder "
                            "(FABRICSIM_SHARED); skipped, with the reason, when they are absent")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("shared") is not None and not CHAKRA_TRACES.is_dir():
        pytest.skip(f"needs ASTRA-sim's Chakra traces in {CHAKRA_TRACES}: the project's shared/ folder is not "
                    "beside this checkout (set FABRICSIM_SHARED to it)")

# Property tests must not turn flaky or slow by chance: a fresh clone has no example database, so without
# this a run could draw a case no earlier run tried (a CP-SAT routing of a heavily failed fat-tree can take
# minutes). `pytest --hypothesis-profile explore` draws new examples on purpose.
settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("fixed")


TWO_HOSTS = """
[topology]
kind = "custom"
nodes = [{name = "h0", kind = "host"}, {name = "h1", kind = "host"}, {name = "s0", kind = "switch", latency = "500ns"}]
links = [{a = "h0", b = "s0", rate = "10Gbps", delay = "1us"}, {a = "h1", b = "s0", rate = "10Gbps", delay = "1us"}]
"""
"""Two hosts on one switch (10 Gb/s, 1 us links, 500 ns switch latency): a scenario's fabric for CLI tests."""

SWEEP_TWO_HOSTS = 'name = "two"\nseeds = 2\n' + TWO_HOSTS.replace("[topology]", "[base.topology]").lstrip() + (
    '[[base.messages]]\nname = "m"\nsrc = "h0"\ndst = "h1"\nsize = 1024\n')
"""A sweep over that fabric: one 1 KiB message, 2 seeds (add a [grid] to vary it)."""
