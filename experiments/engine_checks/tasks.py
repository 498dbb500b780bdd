"""Sweep tasks of the engine-checks study (loaded by file path on every worker)."""

from fabricsim import run, scenario_from_dict


def ecmp_spread(payload: dict, seed: int) -> dict:
    """Packets carried by each of the 8 spine paths when 10 000 one-packet messages use per-message ECMP."""
    rec = run(scenario_from_dict(payload), seed=seed)
    names, tx = rec.values("queues.name"), rec.values("queues.tx_packets")
    return {f"spine{k}": tx[names.index(f"s0->sp{k}")] for k in range(8)}
