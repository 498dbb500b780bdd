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
            Value::Integer(w) if *w < 1 => Err(Decline::new("Input should be greater than or equal to 1")),
            Value::Integer(_) => Err(Decline::new("Input should be less than or equal to 255")),
            _ => read::pos_int(v),
        })?,
    };
    t.finish()?;
    Ok(l)
}

pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let at_least_one = |v: &Value, at: &str, what: &str| match v {
        Value::Array(a) if a.is_empty() => Err(Decline::invalid(at, format!("a custom topology needs at least one {what}"))),
        _ => Ok(()),
    };
    let nodes = t.req("nodes", |v| {
        let nodes = read::tables(v, "topology.nodes")?.into_iter().map(node).collect::<Result<Vec<_>, _>>()?;
        at_least_one(v, "topology.nodes", "node")?;
        Ok(nodes)
    })?;
    let links = t.req("links", |v| {
        let links = read::tables(v, "topology.links")?.into_iter().map(link).collect::<Result<Vec<_>, _>>()?;
        at_least_one(v, "topology.links", "link")?;
        Ok(links)
    })?;
    Ok(Network { nodes, links, policy: None })
}
