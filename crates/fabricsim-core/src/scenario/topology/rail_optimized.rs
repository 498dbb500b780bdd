//! The `rail_optimized` family: GPU servers with an NVSwitch, one rail switch per GPU index per scalable unit, and spines (DGX SuperPOD style).

use super::{link, Link, Network, Node, Policy, RailServer, Switches};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;
use toml::Value;

/// Routing weight of a NIC–NVSwitch link (NVLink) and of a network link.
const NVLINK_WEIGHT: u64 = 3;
const NETWORK_WEIGHT: u64 = 2;

fn weighted(a: String, b: String, rate: u64, delay: u64, weight: u64) -> Link {
    Link { a, b, rate_bps: rate, delay_ps: delay, weight }
}

/// GPUs in rank order, their NICs, NVSwitches, rail switches, spines, cores; links GPU–NIC, NVSwitch–NIC,
/// NIC–rail, rail–spine (⌈servers/spines⌉ parallel), spine–core; a PXN policy unless cross_rail = "spine".
/// O(nodes + links).
pub fn build(t: &mut Tab) -> Result<Network, Decline> {
    let sus = t.req("sus", read::pos_int)?;
    let s_per = t.req("servers_per_su", read::pos_int)?;
    let g_per = t.or("gpus_per_server", 8, read::pos_int)?;
    let spines = t.req("spines", read::pos_int)?;
    let tiers = t.or("spine_tiers", 1, |v: &Value| match v {
        Value::Integer(x @ (1 | 2)) => Ok(*x as u64),
        _ => Err(Decline::new("Input should be 1 or 2")),
    })?;
    let rate = t.or("rate", 400_000_000_000, read::link_rate)?;
    let delay = t.or("delay", 500_000, read::duration)?;
    let nvl = t.or("nvlink_rate", 3_600_000_000_000, read::link_rate)?;
    let nvl_latency = t.or("nvlink_latency", 300_000, read::duration)?;
    let cross_rail = t.or("cross_rail", "pxn", read::literal(&["pxn", "spine"]))?;
    let sw = Switches::read(t)?;
    // GPUs and NICs, NVSwitches, rails, spines (per SU with two tiers), cores; links GPU–NIC, NVSwitch–NIC,
    // NIC–rail, rail–spine (⌈servers/spines⌉ each), spine–core.
    let servers = sus.saturating_mul(s_per);
    let gpus = servers.saturating_mul(g_per);
    let rails = sus.saturating_mul(g_per);
    let mult = s_per.div_ceil(spines);
    let (spine_n, core_n) = if tiers == 1 { (spines, 0) } else { (sus.saturating_mul(spines), g_per.saturating_mul(mult)) };
    super::fits(
        gpus.saturating_mul(2).saturating_add(servers).saturating_add(rails).saturating_add(spine_n).saturating_add(core_n),
        gpus.saturating_mul(3).saturating_add(rails.saturating_mul(spines).saturating_mul(mult)).saturating_add(spine_n.saturating_mul(core_n)),
    )?;
    let (g, s) = (g_per as usize, s_per as usize);
    let gpus: Vec<String> = (0..sus).flat_map(|u| (0..s_per).flat_map(move |sv| (0..g_per).map(move |x| format!("su{u}.s{sv}.g{x}")))).collect();
    let nics: Vec<String> = gpus.iter().map(|x| format!("{x}.nic")).collect();
    let servers: Vec<String> = (0..sus).flat_map(|u| (0..s_per).map(move |sv| format!("su{u}.s{sv}"))).collect();
    let rails: Vec<String> = (0..sus).flat_map(|u| (0..g_per).map(move |x| format!("su{u}.rail{x}"))).collect();
    let mult = s_per.div_ceil(spines);
    let (spine_names, cores): (Vec<String>, Vec<String>) = if tiers == 1 {
        ((0..spines).map(|i| format!("spine{i}")).collect(), Vec::new())
    } else {
        (
            (0..sus).flat_map(|u| (0..spines).map(move |i| format!("su{u}.spine{i}"))).collect(),
            (0..g_per * mult).map(|c| format!("core{c}")).collect(),
        )
    };
    let mut net = Network::default();
    net.nodes.extend(gpus.iter().map(|x| Node::host(x.clone())));
    net.nodes.extend(nics.iter().map(|n| sw.node(n.clone(), Some(0))));
    net.nodes.extend(servers.iter().map(|sv| sw.node(format!("{sv}.nvs"), Some(nvl_latency))));
    for group in [&rails, &spine_names, &cores] {
        net.nodes.extend(group.iter().map(|n| sw.node(n.clone(), None)));
    }
    net.links.extend(gpus.iter().zip(&nics).map(|(x, n)| link(x.clone(), n.clone(), nvl + rate, 0)));
    net.links.extend(nics.iter().enumerate().map(|(i, n)| weighted(format!("{}.nvs", servers[i / g]), n.clone(), nvl, 0, NVLINK_WEIGHT)));
    net.links
        .extend(nics.iter().enumerate().map(|(i, n)| weighted(n.clone(), rails[(i / (s * g)) * g + i % g].clone(), rate, delay, NETWORK_WEIGHT)));
    for (i, r) in rails.iter().enumerate() {
        let ups: &[String] = if tiers == 1 { &spine_names } else { &spine_names[(i / g) * spines as usize..(i / g + 1) * spines as usize] };
        for sp in ups {
            for _ in 0..mult {
                net.links.push(weighted(r.clone(), sp.clone(), rate, delay, NETWORK_WEIGHT));
            }
        }
    }
    if !cores.is_empty() {
        for sp in &spine_names {
            for c in &cores {
                net.links.push(weighted(sp.clone(), c.clone(), rate, delay, NETWORK_WEIGHT));
            }
        }
    }
    if cross_rail == "pxn" {
        net.policy = Some(Policy::Pxn {
            servers: servers
                .iter()
                .enumerate()
                .map(|(i, sv)| RailServer {
                    nvswitch: format!("{sv}.nvs"),
                    gpus: gpus[i * g..(i + 1) * g].to_vec(),
                    nics: nics[i * g..(i + 1) * g].to_vec(),
                })
                .collect(),
        });
    }
    Ok(net)
}
