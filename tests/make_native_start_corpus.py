"""Regenerate tests/native_start/*.toml: every scenario file the other tests write, for tests/test_native_start.py.

Runs the tests that write `.toml` files (fast ones; the docs snippets too) with `Path.write_text` watched, and keeps
each distinct text once, named after the test that wrote it. Run from the repo root:
`.venv/bin/python tests/make_native_start_corpus.py` (a few minutes).
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys

OUT = pathlib.Path(__file__).resolve().parent / "native_start"
SKIP = {"test_native_start.py", "test_install.py", "make_native_start_corpus.py"}


def _watch() -> None:
    """Plugin body (run inside pytest): copy every .toml text written through Path.write_text into OUT."""
    original = pathlib.Path.write_text

    def write_text(self, data, *args, **kwargs):
        result = original(self, data, *args, **kwargs)
        if str(self).endswith(".toml") and isinstance(data, str) and OUT not in self.parents:
            test = os.environ.get("PYTEST_CURRENT_TEST", "unknown").split(" ")[0]
            test = test.replace("tests/", "").replace("::", "__").replace("/", "_")
            test = "".join(c if c.isalnum() or c in "._-" else "_" for c in test)[:90]
            digest = hashlib.sha1(data.encode()).hexdigest()[:12]
            if not any(p.name.endswith(f"__{digest}.toml") for p in OUT.glob("*.toml")):
                original(OUT / f"{test}__{digest}.toml", data)
        return result

    pathlib.Path.write_text = write_text


if os.environ.get("FABRICSIM_NATIVE_CORPUS_PLUGIN"):
    _watch()


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.toml"):
        old.unlink()
    tests = pathlib.Path(__file__).resolve().parent
    files = sorted(str(p) for p in tests.glob("test_*.py") if p.name not in SKIP and ".toml" in p.read_text())
    env = {**os.environ, "FABRICSIM_NATIVE_CORPUS_PLUGIN": "1", "PYTHONPATH": str(tests)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "not slow", "-p", "make_native_start_corpus", *files],
                       env=env)
    print(f"{len(list(OUT.glob('*.toml')))} scenario files in {OUT}")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
