//! Collective operations generated in Rust: a compact spec expands into workload columns (messages, barriers, dependencies).
