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
/// Most nodes plus links a fabric may have: 20 million (the network alone then takes several GiB, and its
/// forwarding tables grow with hosts × switches). Each family estimates its count from its parameters before it
/// builds (`too_large`), so a huge value is one clear error, never an allocation failure.
pub const MAX_ELEMENTS: u64 = 20_000_000;

/// The error for a fabric of about `elements` nodes and links (saturating: a product may overflow), or Ok when it
/// is within MAX_ELEMENTS. Said at `topology`, with the count and the memory the network alone would take
/// (about 200 bytes per node or link, names included).
pub fn too_large(elements: u64) -> Result<(), Decline> {
    if elements <= MAX_ELEMENTS {
        return Ok(());
    }
    let gib = elements as f64 * 200.0 / (1u64 << 30) as f64;
    let gib = if gib < 1e6 { crate::record_json::thousands(gib.ceil() as u64) } else { format!("{gib:.1e}") };
    let shown = if elements == u64::MAX { "more than 18 quintillion".to_string() } else { crate::record_json::thousands(elements) };
    Err(Decline::invalid(
        "topology",
        format!(
            "{shown} nodes and links (about {gib} GiB before any traffic); fabricsim simulates at most {}",
            crate::record_json::thousands(MAX_ELEMENTS)
        ),
    ))
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
    too_large((net.nodes.len() + net.links.len()) as u64)?;
    Ok((kind, net))
}
