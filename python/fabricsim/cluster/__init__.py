"""Multi-job cluster simulation: Poisson job arrivals placed by a policy, slowing each other on shared links."""

from .compare import compare_policies, draw_comparison, draw_jct_cdf, draw_timeline, policy_frame, run_policies
from .jobs import Job
from .policies import POLICIES
from .sim import ClusterConfig, ClusterResult, simulate, sweep_task
from .solo import SoloCache, cosimulate

__all__ = ["ClusterConfig", "ClusterResult", "Job", "POLICIES", "SoloCache", "compare_policies", "cosimulate",
           "draw_comparison", "draw_jct_cdf", "draw_timeline", "policy_frame", "run_policies", "simulate",
           "sweep_task"]
