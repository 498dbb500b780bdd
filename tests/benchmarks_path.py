"""The repository root, for tests that load scripts from benchmarks/ and experiments/."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
