//! The topology families a scenario names by `kind`, one file each, built into nodes, links and a routing policy exactly as `fabricsim.topology` builds them.
//!
//! Invariant: for every family handled here, `network()` lists the same nodes and links in the same order,
//! with the same values, as the Python builder (`graph` reads its file as `fabricsim.topology.graph` does).

mod custom;
mod dragonfly;
mod dumbbell;
mod fat_tree;
mod fat_tree3;
pub mod graph;
mod leaf_spine;
mod multi_dim;
mod rail_optimized;
mod torus;

use super::read::{self, Tab};
use super::Decline;
use toml::Value;

pub const SWITCH_MODELS: &[&str] = &["output_queued", "input_buffered", "shared_buffer"];
/// Every topology family, in the order Python's error for an unknown kind lists them (`FAMILIES`).
pub const KINDS: &[&str] =
    &["custom", "dumbbell", "leaf_spine", "fat_tree", "fat_tree3", "rail_optimized", "dragonfly", "torus", "multi_dim", "graph"];
pub const ARBITERS: &[&str] = &["round_robin", "fifo"];
/// Most nodes plus links a fabric may have: 20 million (the network alone then takes tens of GiB, and its
/// forwarding tables grow with hosts × switches). Each family counts its nodes and links from its parameters
/// before it builds (`fits`), so a huge value is one clear error, never an allocation failure.
pub const MAX_ELEMENTS: u64 = 20_000_000;

/// Ok when a fabric of `nodes` and `links` (a family's count from its parameters; saturating, as a product may
/// overflow) is within MAX_ELEMENTS and the memory budget (`crate::budget`), else the error at `topology` with
/// the count and the memory the network would take (`budget::ELEMENT_BYTES` per node or link, calibrated).
pub fn fits(nodes: u64, links: u64) -> Result<(), Decline> {
    let elements = nodes.saturating_add(links);
    if elements > MAX_ELEMENTS {
        let bytes = elements.saturating_mul(crate::budget::ELEMENT_BYTES);
        return Err(Decline::invalid(
            "topology",
            format!(
                "{} nodes and links (about {} before any traffic); fabricsim simulates at most {}",
                crate::budget::count(elements),
                crate::budget::human(bytes),
                crate::record_json::thousands(MAX_ELEMENTS)
            ),
        ));
    }
    crate::budget::fabric(nodes, links).map_err(super::Decline::from_error)
}
/// Default ingress buffer of an input-buffered switch port (128 KiB).
pub const INPUT_BUFFER: u64 = 128 * 1024;

/// A host or a switch (`NodeDef`).
#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub host: bool,
    pub latency_ps: u64,
    pub model: &'static str,
    pub input_buffer: u64,
    pub arbiter: &'static str,
}

impl Node {
    pub fn host(name: String) -> Node {
        Node { name, host: true, latency_ps: 0, model: "output_queued", input_buffer: INPUT_BUFFER, arbiter: "round_robin" }
    }
}

/// A full-duplex link (`LinkDef`); weight 1..255.
#[derive(Clone, Debug)]
pub struct Link {
    pub a: String,
    pub b: String,
    pub rate_bps: u64,
    pub delay_ps: u64,
    pub weight: u64,
}

pub fn link(a: impl Into<String>, b: impl Into<String>, rate_bps: u64, delay_ps: u64) -> Link {
    Link { a: a.into(), b: b.into(), rate_bps, delay_ps, weight: 1 }
}

/// One rail-optimized server for the PXN policy: its NVSwitch, GPUs and their NICs.
#[derive(Clone, Debug)]
pub struct RailServer {
    pub nvswitch: String,
    pub gpus: Vec<String>,
    pub nics: Vec<String>,
}

/// The routing policy a family imposes on top of least-cost ECMP.
#[derive(Clone, Debug)]
pub enum Policy {
    /// `shapes` ("ring", "fully_connected", "switch" per dimension) and `switches` (per dimension, its group
    /// switches) are empty on a torus (every dimension a ring).
    DimensionOrder {
        dims: Vec<u64>,
        routers: Vec<String>,
        shapes: Vec<&'static str>,
        switches: Vec<Vec<String>>,
    },
    Valiant {
        groups: Vec<Vec<String>>,
    },
    Pxn {
        servers: Vec<RailServer>,
    },
}

/// A resolved network (`Network`).
#[derive(Clone, Debug, Default)]
pub struct Network {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub policy: Option<Policy>,
}

/// `net` as Python's `Network` dumps it (names, not indices; ps, bit/s, bytes). O(nodes + links).
pub fn network_value(net: &Network) -> serde_json::Value {
    use serde_json::json;
    let nodes: Vec<_> = net
        .nodes
        .iter()
        .map(|n| {
            json!({"name": n.name, "kind": if n.host { "host" } else { "switch" }, "latency": n.latency_ps, "model": n.model,
                   "input_buffer": n.input_buffer, "arbiter": n.arbiter})
        })
        .collect();
    let links: Vec<_> = net.links.iter().map(|l| json!({"a": l.a, "b": l.b, "rate": l.rate_bps, "delay": l.delay_ps, "weight": l.weight})).collect();
    let policy = match &net.policy {
        None => serde_json::Value::Null,
        Some(Policy::DimensionOrder { dims, routers, shapes, switches }) => {
            let mut p = json!({"kind": "dimension_order", "dims": dims, "routers": routers});
            if !shapes.is_empty() {
                p["shapes"] = json!(shapes);
                p["switches"] = json!(switches);
            }
            p
        }
        Some(Policy::Valiant { groups }) => json!({"kind": "valiant", "groups": groups}),
        Some(Policy::Pxn { servers }) => {
            json!({"kind": "pxn", "servers": servers.iter().map(|s| json!({"nvswitch": s.nvswitch, "gpus": s.gpus, "nics": s.nics})).collect::<Vec<_>>()})
        }
    };
    json!({"nodes": nodes, "links": links, "policy": policy})
}

/// The switch settings every built family shares (`BuiltTopology`).
#[derive(Clone, Copy, Debug)]
pub struct Switches {
    pub latency_ps: u64,
    pub model: &'static str,
    pub input_buffer: u64,
}

impl Switches {
    fn read(t: &mut Tab) -> Result<Switches, Decline> {
        Ok(Switches {
            latency_ps: t.or("switch_latency", 0, read::duration)?,
            model: t.or("switch_model", "output_queued", read::literal(SWITCH_MODELS))?,
            input_buffer: t.or("input_buffer", INPUT_BUFFER, read::pos_size)?,
        })
    }

    /// A switch node with these settings (`latency` instead of `switch_latency` if given).
    pub fn node(&self, name: impl Into<String>, latency: Option<u64>) -> Node {
        Node {
            name: name.into(),
            host: false,
            latency_ps: latency.unwrap_or(self.latency_ps),
            model: self.model,
            input_buffer: self.input_buffer,
            arbiter: "round_robin",
        }
    }
}

/// The scenario's `[topology]`: its kind and its built network; a `graph` file is read relative to `base` (the
/// scenario file's folder; the current folder when None).
pub fn build(v: &Value, base: Option<&std::path::Path>) -> Result<(&'static str, Network), Decline> {
    let mut t = Tab::of(v, "topology")?;
    let kind = t.kind(KINDS)?;
    let net = match kind {
        "custom" => custom::build(&mut t)?,
        "leaf_spine" => leaf_spine::build(&mut t)?,
        "fat_tree" => fat_tree::build(&mut t)?,
        "fat_tree3" => fat_tree3::build(&mut t)?,
        "dumbbell" => dumbbell::build(&mut t)?,
        "rail_optimized" => rail_optimized::build(&mut t)?,
        "torus" => torus::build(&mut t)?,
        "multi_dim" => multi_dim::build(&mut t)?,
        "dragonfly" => dragonfly::build(&mut t)?,
        "graph" => graph::build(&mut t, base)?,
        _ => unreachable!("t.kind returns one of KINDS"),
    };
    t.finish()?;
    fits(net.nodes.len() as u64, net.links.len() as u64)?;
    Ok((kind, net))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{with_limit, ELEMENT_BYTES};

    /// Each family's count from its parameters (`fits`, before it builds) against a hand count of its nodes and
    /// links: the network built matches it, a budget of exactly the estimate passes, and one byte less refuses.
    #[test]
    fn families_count_their_fabric_before_building_it() {
        let cases: &[(&str, usize, usize)] = &[
            // 2 racks × 3 hosts + 2 leaves + 2 spines = 10 nodes; 6 host links + 2·2 leaf–spine = 10 links.
            ("kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 3\nspines = 2\nhost_rate = \"1Gbps\"\nfabric_rate = \"1Gbps\"", 10, 10),
            // Two NICs per host on 2 leaves per rack, 2 parallel links: 6 + 4 + 3 = 13 nodes; 12 + 4·3·2 = 36 links.
            (
                "kind = \"leaf_spine\"\nracks = 2\nhosts_per_rack = 3\nspines = 3\nleaves_per_rack = 2\nnics_per_host = 2\nparallel_links = 2\nhost_rate = \"1Gbps\"\nfabric_rate = \"1Gbps\"",
                13,
                36,
            ),
            // FT(2; 4, 3): 12 hosts + 3 leaves + 4 spines = 19 nodes; 12 + 3·4 = 24 links.
            ("kind = \"fat_tree\"\nm0 = 4\nm1 = 3\nrate = \"1Gbps\"", 19, 24),
            // k = 4: k³/4 = 16 hosts, 5k²/4 = 20 switches; 16 host + 16 edge–agg + 16 agg–core = 48 links.
            ("kind = \"fat_tree3\"\nk = 4\nrate = \"1Gbps\"", 36, 48),
            // 5 senders + leaf + spine + receiver = 8 nodes; 5 + bottleneck + receiver = 7 links.
            ("kind = \"dumbbell\"\nsenders = 5", 8, 7),
            // 4×3 routers × 2 hosts = 24 hosts + 12 routers; 24 host links + 12 (x ring) + 12 (y ring) = 48.
            ("kind = \"torus\"\ndims = [4, 3]\nrate = \"1Gbps\"\nhosts_per_router = 2", 36, 48),
            // 2×2×2: 8 hosts + 8 routers; 8 host links + 3 dimensions of size 2 × 4 pairs = 20.
            ("kind = \"torus\"\ndims = [2, 2, 2]\nrate = \"1Gbps\"", 16, 20),
            // p = a = h = 1, g = 2: 2 hosts + 2 routers; 2 host links, 0 local, 1 global = 3.
            ("kind = \"dragonfly\"\np = 1\na = 1\nh = 1\nrate = \"1Gbps\"", 4, 3),
            // p = 2, a = 2, h = 1, g = 3: 12 hosts + 6 routers; 12 + 3·1 local + 3·2/2 global = 18.
            ("kind = \"dragonfly\"\np = 2\na = 2\nh = 1\nrate = \"1Gbps\"", 18, 18),
            // 2 SUs × 2 servers × 2 GPUs: 8 GPUs + 8 NICs + 4 NVSwitches + 4 rails + 2 spines = 26 nodes;
            // 8 GPU–NIC + 8 NVSwitch–NIC + 8 NIC–rail + 4 rails × 2 spines × ⌈2/2⌉ = 32 links.
            ("kind = \"rail_optimized\"\nsus = 2\nservers_per_su = 2\ngpus_per_server = 2\nspines = 2", 26, 32),
            // Two tiers, 3 servers per SU, 2 spines per SU: cores = 2 GPUs × ⌈3/2⌉ = 4; 12 GPUs + 12 NICs + 6 NVS +
            // 4 rails + 4 spines + 4 cores = 42 nodes; 36 + 4 rails × 2 × 2 + 4 spines × 4 cores = 68 links.
            ("kind = \"rail_optimized\"\nsus = 2\nservers_per_su = 3\ngpus_per_server = 2\nspines = 2\nspine_tiers = 2", 42, 68),
            // A ring of 4 and a switch of 2: 8 hosts + 8 routers + 4 switches = 20 nodes; 8 + 2 rings × 4 + 4 × 2 = 24.
            (
                "kind = \"multi_dim\"\ndims = [{shape = \"ring\", npus = 4, rate = \"1Gbps\"}, {shape = \"switch\", npus = 2, rate = \"1Gbps\"}]",
                20,
                24,
            ),
        ];
        for &(text, nodes, links) in cases {
            let v: toml::Value = toml::from_str(text).expect("a test table");
            let exact = ((nodes + links) as u64) * ELEMENT_BYTES;
            let (_, net) = with_limit(Some(exact), || build(&v, None)).unwrap_or_else(|d| panic!("{text}: {}", d.report()));
            assert_eq!((net.nodes.len(), net.links.len()), (nodes, links), "{text}");
            let refused = with_limit(Some(exact - 1), || build(&v, None)).expect_err(text).report();
            assert!(refused.starts_with(&format!("topology: {nodes} nodes and {links} links would take about")), "{refused}");
        }
    }

    #[test]
    fn a_huge_fabric_is_refused_before_it_is_built() {
        let v: toml::Value = toml::from_str("kind = \"fat_tree3\"\nk = 1000\nrate = \"1Gbps\"").unwrap();
        // k = 1000: k³/4 = 250,000,000 hosts and 5k²/4 = 1,250,000 switches; k³/4 · 3 = 750,000,000 links.
        let e = with_limit(Some(u64::MAX), || build(&v, None)).unwrap_err().report();
        assert!(e.starts_with("topology: 1,001,250,000 nodes and links (about 2,797 GiB"), "{e}");
        let v: toml::Value =
            toml::from_str("kind = \"leaf_spine\"\nracks = 100\nhosts_per_rack = 100\nspines = 10\nhost_rate = \"1Gbps\"\nfabric_rate = \"1Gbps\"")
                .unwrap();
        // 10,000 hosts + 100 leaves + 10 spines; 10,000 + 1,000 links: 21,110 × 3,000 B ≈ 63 MB > 10 MB.
        let e = with_limit(Some(10_000_000), || build(&v, None)).unwrap_err().report();
        assert_eq!(
            e,
            "topology: 10,110 nodes and 11,000 links would take about 64 MB, beyond the memory budget of 10 MB (--memory-limit); give a smaller fabric or a larger budget"
        );
    }
}
