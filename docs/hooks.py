"""mkdocs hook: before every build, write the generated reference pages (scenario keys, command line, Python API).

The same pages are committed (`python docs/gen_reference.py --write`), so their links work in a clone too;
tests/test_reference_docs.py keeps the committed ones equal to a fresh render.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def on_pre_build(config, **kwargs) -> None:
    sys.path.insert(0, str(HERE))
    import gen_reference

    for path, text in gen_reference.reference_pages().items():
        path.parent.mkdir(exist_ok=True)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
