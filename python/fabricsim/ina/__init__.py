"""In-network aggregation: the ATRO joint topology + routing optimizer and the ARO, PARING and SPAR baselines."""
