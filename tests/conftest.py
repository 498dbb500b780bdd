"""pytest set-up shared by every test: Hypothesis draws the same examples on every run (CI included)."""

from hypothesis import settings

# Property tests must not turn flaky or slow by chance: a fresh clone has no example database, so without
# this a run could draw a case no earlier run tried (a CP-SAT routing of a heavily failed fat-tree can take
# minutes). `pytest --hypothesis-profile explore` draws new examples on purpose.
settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("fixed")
