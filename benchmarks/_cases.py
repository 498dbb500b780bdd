"""Benchmark cases run one per process (so that peak RSS is the case's own): report from the child, collect in the parent."""

from __future__ import annotations

import json
import resource
import subprocess
import sys


def out(**kw) -> None:
    """In a child: print the case's figures, with its peak RSS, as one JSON line."""
    kw["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(kw))


def child(script: str, case: str) -> dict:
    """In the parent: run `python SCRIPT CASE` and return the JSON line it printed last."""
    r = subprocess.run([sys.executable, script, case], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])
