//! The `custom` family: nodes and links given one by one (`[[topology.nodes]]`, `[[topology.links]]`).

use super::{Link, Network, Node, ARBITERS, INPUT_BUFFER, SWITCH_MODELS};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;
use toml::Value;

fn node(mut t: Tab) -> Result<Node, Decline> {
    let n = Node {
        name: t.req("name", read::name)?,
        host: t.req("kind", read::literal(&["host", "switch"]))? == "host",
        latency_ps: t.or("latency", 0, read::duration)?,
        model: t.or("model", "output_queued", read::literal(SWITCH_MODELS))?,
        input_buffer: t.or("input_buffer", INPUT_BUFFER, read::pos_size)?,
        arbiter: t.or("arbiter", "round_robin", read::literal(ARBITERS))?,
    };
    t.finish()?;
    Ok(n)
}

/// A link table (`LinkDef`): a, b, rate, delay, weight (a strict integer 1..255).
pub fn link(mut t: Tab) -> Result<Link, Decline> {
    let l = Link {
        a: t.req("a", read::name)?,
        b: t.req("b", read::name)?,
        rate_bps: t.req("rate", read::link_rate)?,
        delay_ps: t.or("delay", 0, read::duration)?,
        weight: t.or("weight", 1, |v: &Value| match v {
            Value::Integer(w) if (1..=255).contains(w) => Ok(*w as u64),
            _ => Err(Decline::new("weight: expected an integer 1..255")),
        })?,
    };
    t.finish()?;
    Ok(l)
}

pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let nodes = t.req("nodes", |v| read::tables(v, "topology.nodes")?.into_iter().map(node).collect::<Result<Vec<_>, _>>())?;
    let links = t.req("links", |v| read::tables(v, "topology.links")?.into_iter().map(link).collect::<Result<Vec<_>, _>>())?;
    if nodes.is_empty() || links.is_empty() {
        return Err(Decline::new("topology: a custom topology needs at least one node and one link"));
    }
    Ok(Network { nodes, links, policy: None })
}
