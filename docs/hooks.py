"""mkdocs hook: before every build, write the generated reference pages (scenario keys, command-line help)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def on_pre_build(config, **kwargs) -> None:
    sys.path.insert(0, str(HERE))
    import gen_reference

    (HERE / "reference").mkdir(exist_ok=True)
    (HERE / "reference" / "scenario.md").write_text(gen_reference.render())
    (HERE / "reference" / "cli.md").write_text(gen_reference.render_cli())
