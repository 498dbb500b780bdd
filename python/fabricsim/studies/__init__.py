"""The reproduced studies' own numbers: paper constants, named scenarios and presets, one module per study.

`fors` (study 004: FT(2;20,18), its failure scenarios, the 141 Gb/s calibration target), `incast` (study 001:
the dumbbell incast run, its defaults and metrics), `orchestration` (study 000: its Vela-like fabric, whose data file
fabricsim/_data/fabrics/vela.toml holds the placements of its Tables II and III and the Table IV calibration). experiments/<study>/run.py and the CLI's study commands import them; the general library
never does, and takes such values as parameters instead.
"""
