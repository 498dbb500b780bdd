"""The wheel works anywhere: build it, install it into a fresh virtualenv, and use it from a temporary folder.

`make check-install` runs this (slow: building the wheel and installing its dependencies from PyPI take
minutes). FABRICSIM_WHEEL=PATH tests a wheel built beforehand instead of building one; CARGO_TARGET_DIR is
honoured by the build. Nothing here reads the checkout at run time: the commands run with the fresh venv's
`fabricsim` and `python`, in a folder outside the checkout, as a user who only has the wheel would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from test_docs_snippets import SHELL, blocks

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SKIPPED_PARTS = {"outputs", "__pycache__"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if os.environ.get("FABRICSIM_WHEEL"):
        return Path(os.environ["FABRICSIM_WHEEL"])
    out = tmp_path_factory.mktemp("dist")
    maturin = shutil.which("maturin", path=str(BIN)) or shutil.which("maturin")
    assert maturin, "maturin is not installed (make setup installs it into .venv)"
    r = subprocess.run([maturin, "build", "--release", "-o", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    (whl,) = out.glob("fabricsim-*.whl")
    return whl


BASE_MB = 200
"""Issue 31: the base wheel with its dependencies installs into a fresh venv at <= 200 MB."""


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv (no system site-packages) with the wheel and its base dependencies (no extras) from
    PyPI; its bin/."""
    d = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(d)], check=True, env=clean_env(None))
    r = subprocess.run([str(d / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        str(wheel)], capture_output=True, text=True, timeout=1800, env=clean_env(None))
    assert r.returncode == 0, r.stderr[-3000:]
    return d / "bin"


def clean_env(bin_dir: Path | None) -> dict[str, str]:
    """The environment of a user with only the venv at bin_dir: nothing of this checkout's venv or sources."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p).resolve() != BIN.resolve()]
    env["PATH"] = os.pathsep.join(([str(bin_dir)] if bin_dir else []) + path)
    env["MPLBACKEND"] = "Agg"
    return env


def sh(cmd: str, cwd: Path, bin_dir: Path) -> subprocess.CompletedProcess:
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", cmd], cwd=cwd, env=clean_env(bin_dir),
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, f"{cmd!r} failed in {cwd} (exit {r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r


def test_wheel_carries_the_examples_and_studies_without_outputs_or_caches(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"fabricsim/_data/{top}/{p.relative_to(ROOT / top).as_posix()}"
                for top in ("examples", "experiments") for p in (ROOT / top).rglob("*")
                if p.is_file() and not SKIPPED_PARTS & set(p.relative_to(ROOT).parts)}
    assert {n for n in expected if n.endswith(("run.py", "paper.json", ".toml"))}, expected
    assert expected <= names, sorted(expected - names)
    assert not [n for n in names if SKIPPED_PARTS & set(n.split("/"))]
    assert "fabricsim/cli/examples.py" in names and any(n.startswith("fabricsim/_core") for n in names)
    fabrics = {f"fabricsim/_data/fabrics/{p.name}" for p in (ROOT / "python/fabricsim/_data/fabrics").glob("*.toml")}
    assert "fabricsim/_data/fabrics/vela.toml" in fabrics and fabrics <= names, sorted(fabrics - names)


def du_mb(d: Path) -> float:
    return sum(p.stat().st_size for p in d.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20


def test_base_install_is_lean_and_runs_the_quick_start(venv, tmp_path):
    size = du_mb(venv.parent)
    assert size <= BASE_MB, f"the base install takes {size:.0f} MB (target <= {BASE_MB} MB)"
    r = subprocess.run([str(venv / "python"), "-c", "import importlib.util as u; print([m for m in ('scipy', 'pandas', "
                        "'pyarrow', 'matplotlib', 'ortools', 'highspy', 'dask') if u.find_spec(m)])"],
                       cwd=tmp_path, env=clean_env(venv), capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout
    r = sh("fabricsim examples copy ex && fabricsim run ex/leaf_spine_incast.toml", tmp_path, venv)
    assert "wrote ex/leaf_spine_incast.toml" in r.stdout and "completion:" in r.stdout
    r = subprocess.run(["bash", "-c", "fabricsim cluster --jobs 2"], cwd=tmp_path, env=clean_env(venv),
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip().endswith("pip install 'fabricsim[cluster]'"), r.stderr
    run_quick_start(venv, tmp_path)


def test_quick_start_examples_and_a_study_from_a_temporary_folder(venv, wheel, tmp_path):
    r = subprocess.run([str(venv / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        f"{wheel}[studies]"], capture_output=True, text=True, timeout=1800, env=clean_env(None))
    assert r.returncode == 0, r.stderr[-3000:]
    site = subprocess.run([str(venv / "python"), "-c", "import fabricsim, pathlib; "
                           "print(pathlib.Path(fabricsim.__file__).parent)"],
                          cwd=tmp_path, env=clean_env(venv), capture_output=True, text=True, check=True).stdout.strip()
    pkg = Path(site)
    assert pkg.is_relative_to(venv.parent) and not pkg.resolve().is_relative_to(ROOT), pkg
    shipped = files_below(pkg / "_data")

    # The acceptance, word for word.
    r = sh("fabricsim examples copy ex && fabricsim run ex/leaf_spine_incast.toml", tmp_path, venv)
    assert "wrote ex/leaf_spine_incast.toml" in r.stdout and "completion:" in r.stdout
    r = sh("fabricsim reproduce engine_checks --quick --quiet && fabricsim report", tmp_path, venv)
    page = tmp_path / "fabricsim-outputs" / "report.html"
    assert page.is_file() and "Engine checks" in page.read_text()
    m = re.search(r"^wrote fabricsim-outputs/report\.html \(1 study, (\d+)/(\d+) numbers within tolerance\)$",
                  r.stdout, re.M)
    assert m and m.group(1) == m.group(2) and int(m.group(2)) > 0, r.stdout[-2000:]
    assert (tmp_path / "fabricsim-outputs" / "engine_checks" / "report.json").is_file()
    # Nothing was written into the installed package.
    assert files_below(pkg / "_data") == shipped


def run_quick_start(venv: Path, tmp_path: Path) -> None:
    """The README's Quick start, on examples copied from the wheel: every shell and Python block that is not
    marked skip, with `.venv/bin/` dropped and the checkout's set-up (`make ...`) left out."""
    qs = tmp_path / "quick_start"
    qs.mkdir()
    sh("fabricsim examples copy examples", qs, venv)
    ran = 0
    for n, b in enumerate(quick_start_blocks()):
        if re.search(r"fabricsim (reproduce|report)", b.text):
            continue  # the studies need the `studies` extra: the other test installs it and runs them
        if b.lang in SHELL or not b.lang:
            lines = [ln.replace(".venv/bin/", "") for ln in b.text.splitlines() if not ln.lstrip().startswith("make ")]
            if any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines):
                sh("\n".join(lines), qs, venv)
                ran += 1
        elif b.lang == "python":
            script = qs / f"quick_start_{n}.py"
            script.write_text(b.text + "\n")
            sh(f"python {script.name}", qs, venv)
            ran += 1
    assert ran >= 2
    r = sh("fabricsim run examples/dumbbell_onoff.toml --json", qs, venv)
    assert json.loads(r.stdout)["packets"]["tx"] > 0


def quick_start_blocks():
    """The runnable blocks of the README's "Quick start" section (up to the next `## ` heading)."""
    text = (ROOT / "README.md").read_text().split("\n")
    start = text.index("## Quick start") + 1
    end = next((i for i in range(start, len(text)) if text[i].startswith("## ")), len(text))
    return [b for b in blocks(ROOT / "README.md") if start < b.line <= end and b.marker != "skip"
            and b.lang in SHELL | {"", "python"}]


def files_below(d: Path) -> set[str]:
    return {p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
