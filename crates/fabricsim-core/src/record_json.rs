//! The CLI's `--json` run record written natively, byte for byte as Python's `RunRecord.to_json()` writes it (json.dumps separators, float repr).
//!
//! The per-flow and per-queue rows come from the record's schema (`record_schema::rows_json`, which Python's
//! `to_json` calls too); floats elsewhere are printed as Python's `repr` prints them (`py_repr`), `.6g` as
//! Python formats it (`py_g6`).

use crate::record::{FlowKind, RunRecord};
use crate::record_schema::{rows_json, Names, Table, Values, MISSING, PS};

/// (digits, exponent) of `x`'s shortest round-trip decimal, x = 0.d1d2… × 10^(exponent + 1).
fn shortest(x: f64) -> (String, i32) {
    let s = format!("{:e}", x.abs());
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.replace('.', ""), e.parse().unwrap_or(0))
}

/// A float as Python's `repr` (and so `json.dumps`) writes it: shortest digits, fixed notation for
/// exponents -4..16 with at least one decimal, else `d.ddde±XX`. Non-finite values as json.dumps writes them.
pub fn py_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x == 0.0 {
        return format!("{sign}0.0");
    }
    let (d, e) = shortest(x);
    let body = if (-4..16).contains(&e) {
        if e < 0 {
            format!("0.{}{d}", "0".repeat((-e - 1) as usize))
        } else if (e as usize) + 1 >= d.len() {
            format!("{d}{}.0", "0".repeat(e as usize + 1 - d.len()))
        } else {
            format!("{}.{}", &d[..e as usize + 1], &d[e as usize + 1..])
        }
    } else {
        let m = if d.len() > 1 { format!("{}.{}", &d[..1], &d[1..]) } else { d.clone() };
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    };
    format!("{sign}{body}")
}

/// Python's `format(x, ".6g")`.
pub fn py_g6(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let s = format!("{x:.5e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let trim = |t: &str| if t.contains('.') { t.trim_end_matches('0').trim_end_matches('.').to_string() } else { t.to_string() };
    if (-4..6).contains(&e) {
        trim(&format!("{x:.*}", (5 - e) as usize))
    } else {
        format!("{}e{}{:02}", trim(m), if e < 0 { '-' } else { '+' }, e.abs())
    }
}

/// An integer with thousands separators (Python's `f"{n:,}"`).
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn opt_f(out: &mut String, x: Option<f64>) {
    match x {
        Some(x) => out.push_str(&py_repr(x)),
        None => out.push_str("null"),
    }
}

/// Flow rows of `r` that are messages never delivered, in order.
fn incomplete(r: &RunRecord) -> Vec<usize> {
    undelivered(&Table::of_record(r, "flows"))
}

/// Rows of a flows table that are messages never delivered, in order.
fn undelivered(flows: &Table<'_>) -> Vec<usize> {
    let (kind, done) = match flows.get("flows.kind") {
        Some(Values::U8(k)) => (k.as_ref(), u64s(flows, "flows.complete_ps")),
        _ => (&[][..], &[][..]),
    };
    let message = FlowKind::Message as u8;
    (0..kind.len()).filter(|&i| kind[i] == message && done.get(i).copied().unwrap_or(MISSING) == MISSING).collect()
}

/// Whether a run completed (`RunRecord.complete`): no halt, no deadlock, no `undelivered` message, every compute
/// step ended (`compute_end`).
fn completed(halted: bool, deadlock: bool, undelivered: usize, compute_end: &[u64]) -> bool {
    !halted && !deadlock && undelivered == 0 && compute_end.iter().all(|&e| e != MISSING)
}

/// Whether the run completed (`RunRecord.complete`).
pub fn complete(r: &RunRecord) -> bool {
    let compute = Table::of_record(r, "compute");
    completed(r.halted.is_some(), r.deadlock.is_some(), incomplete(r).len(), u64s(&compute, "compute.end_ps"))
}

/// Python's `RunRecord.incomplete_reason(stop_s)`: one sentence on why the run did not complete, or None.
pub fn incomplete_reason(r: &RunRecord, stop_s: Option<f64>) -> Option<String> {
    if complete(r) {
        return None;
    }
    let rows = incomplete(r);
    let n = rows.len();
    let first_msg = r.flows.kind.iter().position(|k| *k == FlowKind::Message).unwrap_or(0);
    let label = |i: usize| {
        let k = r.flows.name[i] as usize;
        r.flow_names.get(k).cloned().unwrap_or_else(|| format!("messages[{}]", i as i64 - first_msg as i64))
    };
    let names = rows.iter().take(3).map(|&i| label(i)).collect::<Vec<_>>().join(", ") + if n > 3 { ", ..." } else { "" };
    let what = if n > 0 { format!("{} message(s) never delivered ({names})", thousands(n as u64)) } else { "compute steps never finished".into() };
    let dropped = r.packets.dropped;
    if let Some(d) = &r.deadlock {
        return Some(format!("deadlock: a cycle of paused ports: {d}; {what}"));
    }
    let why = match r.halted {
        Some(crate::control::Halt::Interrupted) => "the run was interrupted".to_string(),
        Some(h) => format!("the run was stopped by its {} limit", h.as_str().replace('_', " ")),
        None if dropped > 0 && r.flows.kind.contains(&FlowKind::RdmaAck) => format!(
            "{} packet(s) were dropped and the RDMA transport resends only on a NACK (go-back-N, no retransmission timeout, as \
             HPCC's model): a lost tail is never resent; for a failed link or bit errors use transport = \"message\", which \
             resends on a timeout ([retransmit]), and for full queues lossless switches (switch_model = \"shared_buffer\" with \
             [pfc]) or longer queues",
            thousands(dropped)
        ),
        None if r.retransmit.is_some_and(|x| x.abandoned > 0) => {
            let x = r.retransmit.unwrap_or_default();
            format!(
                "{} packet(s) were dropped and {} message(s) gave up after [retransmit] max_retries timeouts without progress \
                 (a host cut off by a failure, or a path that kept losing; max_retries = 0 turns retransmission off): bring the \
                 link back (link_up), add paths, or raise retransmit.max_retries",
                thousands(dropped),
                thousands(x.abandoned)
            )
        }
        None if r.reached_stop => format!("the scenario's stop{} came first", stop_s.map(|s| format!(" ({} s)", py_g6(s))).unwrap_or_default()),
        None => "no event was left with work outstanding: a lossless fabric deadlocked or a dependency was never met".into(),
    };
    Some(format!("the workload did not complete: {what}; {why}"))
}

/// The record's `--json` object of `r` (the native CLI's): `record_json` of its head and its tables.
pub fn run_json(r: &RunRecord) -> String {
    record_json(&Head::of_record(r), &Tables::of(|t| Table::of_record(r, t)), &Names::of_record(r), true)
}

/// The tables the `--json` object reads, by name (`JSON_TABLES`).
#[derive(Clone, Debug, Default)]
pub struct Tables<'r> {
    pub flows: Table<'r>,
    pub queues: Table<'r>,
    pub compute: Table<'r>,
    pub hosts: Table<'r>,
    pub timeline: Table<'r>,
    pub roce: Table<'r>,
}

/// The record's tables the `--json` object reads.
pub const JSON_TABLES: [&str; 6] = ["flows", "queues", "compute", "hosts", "timeline", "roce"];

impl<'r> Tables<'r> {
    /// Each of `JSON_TABLES` from `get`.
    pub fn of(mut get: impl FnMut(&'static str) -> Table<'r>) -> Tables<'r> {
        Tables {
            flows: get("flows"),
            queues: get("queues"),
            compute: get("compute"),
            hosts: get("hosts"),
            timeline: get("timeline"),
            roce: get("roce"),
        }
    }
}

/// A hybrid run's fast-forward summary (`RunRecord::fast_forward`).
#[derive(Clone, Debug, Default)]
pub struct FastForward<'a> {
    pub window_ps: u64,
    pub jumps: u64,
    pub skipped_ps: u64,
    pub skipped_packets: u64,
    pub note: Option<&'a str>,
}

/// What the `--json` object says besides the record's tables: its scalars. Built from a `RunRecord` (the native
/// CLI) or from the scalars Python holds (`_core.record_json`), so both print through `record_json`.
#[derive(Clone, Debug, Default)]
pub struct Head<'a> {
    pub fidelity: &'a str,
    pub seed: u64,
    pub completion_ps: Option<u64>,
    pub end_ps: u64,
    /// tx, rx, dropped, in_flight.
    pub packets: [u64; 4],
    pub hops: &'a [u64],
    pub events: u64,
    pub wall_s: f64,
    pub halted: Option<&'a str>,
    pub deadlock: Option<&'a str>,
    pub bin_ps: Option<u64>,
    /// CNPs received (a RoCE run's; None without RoCE).
    pub cnps: Option<u64>,
    pub fast_forward: Option<FastForward<'a>>,
    /// The message transport's retransmissions (`RunRecord::retransmit`; None when no message lost a packet).
    pub retransmit: Option<crate::record::RetransmitStats>,
    /// The scenario's network events (`RunRecord::net_events`; empty without `[[events]]`).
    pub net_events: &'a [crate::record::NetEventRow],
    /// The UEC transport's counters (`RunRecord::uec`; None without `[uec]`).
    pub uec: Option<crate::record::UecStats>,
}

impl<'a> Head<'a> {
    pub fn of_record(r: &'a RunRecord) -> Head<'a> {
        let p = &r.packets;
        Head {
            fidelity: &r.fidelity,
            seed: r.seed,
            completion_ps: r.completion_ps,
            end_ps: r.end_ps,
            packets: [p.tx, p.rx, p.dropped, p.in_flight],
            hops: &r.hops,
            events: r.events,
            wall_s: r.wall_s,
            halted: r.halted.map(|h| h.as_str()),
            deadlock: r.deadlock.as_deref(),
            bin_ps: r.bin_ps,
            cnps: r.roce.as_ref().map(|x| x.cnps),
            fast_forward: r.fast_forward.as_ref().map(|f| FastForward {
                window_ps: f.window_ps,
                jumps: f.jumps,
                skipped_ps: f.skipped_ps,
                skipped_packets: f.skipped_packets,
                note: f.note.as_deref(),
            }),
            retransmit: r.retransmit,
            net_events: &r.net_events,
            uec: r.uec.as_ref().map(|u| u.stats),
        }
    }
}

fn u64s<'t>(t: &'t Table<'_>, name: &str) -> &'t [u64] {
    match t.get(name) {
        Some(Values::U64(v)) => v,
        _ => &[],
    }
}

fn u32s<'t>(t: &'t Table<'_>, name: &str) -> &'t [u32] {
    match t.get(name) {
        Some(Values::U32(v)) => v,
        _ => &[],
    }
}

/// The duration link utilization is measured over (ps): the completion time (the last message delivered or compute
/// step ended) when the workload has one, else the run's end time.
pub fn links_span_ps(completion_ps: Option<u64>, end_ps: u64) -> u64 {
    completion_ps.filter(|&c| c > 0).unwrap_or(end_ps)
}

/// The `links` rows: one per directed link (egress port, `queues` row), busiest first (utilization, then bytes, then
/// port id): name ("node->peer"), rate_bps (line rate), bytes and packets sent, utilization = bytes·8 / (rate_bps ·
/// span), gbps = bytes·8 / span / 1e9 (span = `links_span_ps`), peak_bytes and peak_packets of its queue (null at
/// flow fidelity: the fluid model has no queues), pfc_pauses (PAUSE frames the link's sender received, 0 without
/// PFC) and drops. Utilization is null without a rate or a span. A link that a `link_rate` event changed (one of
/// `rated`, from `rated_links`) also says `rate_end_bps`, the rate in force at the end of the run; its `rate_bps`
/// and utilization stay the topology's line rate's. O(ports · log ports + ports · rated links).
pub fn links_json(fidelity: &str, span_ps: u64, queues: &Table<'_>, roce: &Table<'_>, names: &Names<'_>, rated: &[(String, u64)]) -> String {
    let (bytes, pkts, rate) = (u64s(queues, "queues.tx_bytes"), u64s(queues, "queues.tx_packets"), u64s(queues, "queues.rate_bps"));
    let (peak_b, peak_p, drops, pauses) =
        (u64s(queues, "queues.peak_bytes"), u64s(queues, "queues.peak_packets"), u64s(queues, "queues.drops"), u64s(roce, "roce.pause_rx"));
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    let span_s = span_ps as f64 * PS;
    let util = |i: usize| {
        let r = at(rate, i);
        (r > 0 && span_ps > 0).then(|| at(bytes, i) as f64 * 8.0 / (r as f64 * span_s))
    };
    let mut order: Vec<usize> = (0..queues.rows).collect();
    order.sort_by(|&a, &b| {
        let (ua, ub) = (util(a).unwrap_or(-1.0), util(b).unwrap_or(-1.0));
        ub.total_cmp(&ua).then(at(bytes, b).cmp(&at(bytes, a))).then(a.cmp(&b))
    });
    let queueless = fidelity == "flow";
    let mut o = String::with_capacity(order.len() * 220 + 2);
    o.push('[');
    for (n, &i) in order.iter().enumerate() {
        if n > 0 {
            o.push_str(", ");
        }
        let name = names.queue_names.get(i).map(|s| json_str(s)).unwrap_or_else(|| "\"\"".into());
        o.push_str(&format!(
            "{{\"name\": {name}, \"rate_bps\": {}, \"bytes\": {}, \"packets\": {}, \"utilization\": ",
            at(rate, i),
            at(bytes, i),
            at(pkts, i)
        ));
        opt_f(&mut o, util(i));
        o.push_str(", \"gbps\": ");
        opt_f(&mut o, (span_ps > 0).then(|| at(bytes, i) as f64 * 8.0 / span_s / 1e9));
        if queueless {
            o.push_str(", \"peak_bytes\": null, \"peak_packets\": null");
        } else {
            o.push_str(&format!(", \"peak_bytes\": {}, \"peak_packets\": {}", at(peak_b, i), at(peak_p, i)));
        }
        o.push_str(&format!(", \"pfc_pauses\": {}, \"drops\": {}", at(pauses, i), at(drops, i)));
        if !rated.is_empty() {
            if let Some(r) = names.queue_names.get(i).and_then(|n| rate_end(rated, n)) {
                o.push_str(&format!(", \"rate_end_bps\": {r}"));
            }
        }
        o.push('}');
    }
    o.push(']');
    o
}

/// The links `link_rate` events changed by the end of the run (`end_ps`), each with the rate in force then: the
/// last such event's at or before the end (events are in time order). Names as the events give them ("a-b").
pub fn rated_links(events: &[crate::record::NetEventRow], end_ps: u64) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for e in events.iter().filter(|e| e.kind == "link_rate" && e.t_ps <= end_ps) {
        for l in &e.links {
            match out.iter_mut().find(|(n, _)| n == l) {
                Some(slot) => slot.1 = e.rate_bps,
                None => out.push((l.clone(), e.rate_bps)),
            }
        }
    }
    out
}

/// The rate at the end of the directed link named `queue` ("x->y", "#k" for a parallel link) if `rated` has its
/// link ("x-y" or "y-x"). O(rated).
fn rate_end(rated: &[(String, u64)], queue: &str) -> Option<u64> {
    let base = queue.rsplit_once('#').map_or(queue, |(b, _)| b);
    let (x, y) = base.split_once("->")?;
    let (xy, yx) = (format!("{x}-{y}"), format!("{y}-{x}"));
    rated.iter().find(|(n, _)| *n == xy || *n == yx).map(|&(_, r)| r)
}

/// The CLI's `--json` object, byte for byte as Python's `json.dumps` writes it: the head's scalars, the flow rows
/// (`rows_json`; null with `flows` false), the active queues, hosts' busy times, throughput bins, RoCE totals and
/// the fast-forward summary, from the record's `tables`. The one writer of the object.
pub fn record_json(h: &Head<'_>, tables: &Tables<'_>, names: &Names<'_>, flows: bool) -> String {
    let ft = &tables.flows;
    let rows = if flows { rows_json(ft, names, None) } else { "null".into() };
    let incomplete = undelivered(ft).len();
    let compute_end = u64s(&tables.compute, "compute.end_ps");
    let complete = completed(h.halted.is_some(), h.deadlock.is_some(), incomplete, compute_end);
    let mut o = String::with_capacity(rows.len() + 1024);
    o.push_str(&format!("{{\"fidelity\": {}, \"seed\": {}, \"completion_time_s\": ", json_str(h.fidelity), h.seed));
    opt_f(&mut o, h.completion_ps.map(|c| c as f64 * PS));
    o.push_str(", \"end_time_s\": ");
    o.push_str(&py_repr(h.end_ps as f64 * PS));
    let p = h.packets;
    o.push_str(&format!(", \"packets\": {{\"tx\": {}, \"rx\": {}, \"dropped\": {}, \"in_flight\": {}}}", p[0], p[1], p[2], p[3]));
    let hops: Vec<String> = h.hops.iter().enumerate().filter(|(_, v)| **v != 0).map(|(k, v)| format!("\"{k}\": {v}")).collect();
    o.push_str(&format!(", \"hops\": {{{}}}, \"flows\": ", hops.join(", ")));
    o.push_str(&rows);
    let qt = &tables.queues;
    let (qtx, qdrops) = (u64s(qt, "queues.tx_packets"), u64s(qt, "queues.drops"));
    let active: Vec<usize> = (0..qt.rows).filter(|&i| qtx.get(i).copied().unwrap_or(0) != 0 || qdrops.get(i).copied().unwrap_or(0) != 0).collect();
    let queues = rows_json(qt, names, Some(&active));
    let span = links_span_ps(h.completion_ps, h.end_ps);
    o.push_str(&format!(", \"queues\": {queues}, \"links_span_s\": {}, \"links\": ", py_repr(span as f64 * PS)));
    o.push_str(&links_json(h.fidelity, span, qt, &tables.roce, names, &rated_links(h.net_events, h.end_ps)));
    o.push_str(&format!(", \"events\": {}, \"wall_s\": ", h.events));
    o.push_str(&py_repr(h.wall_s));
    let halted = h.halted.map(json_str).unwrap_or_else(|| "null".into());
    o.push_str(&format!(", \"complete\": {complete}, \"incomplete_messages\": {incomplete}, \"halted\": {halted}"));
    let ht = &tables.hosts;
    let hnode = u32s(ht, "hosts.node");
    if !hnode.is_empty() && !compute_end.is_empty() {
        let (cp, cm, ex) = (u64s(ht, "hosts.compute_ps"), u64s(ht, "hosts.comm_ps"), u64s(ht, "hosts.exposed_comm_ps"));
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0) as f64 * PS;
        let rows: Vec<String> = (0..hnode.len())
            .map(|i| {
                let name = names.node_names.get(hnode[i] as usize).map(|s| json_str(s)).unwrap_or_else(|| "\"\"".into());
                format!(
                    "{{\"host\": {name}, \"compute_s\": {}, \"comm_s\": {}, \"exposed_comm_s\": {}}}",
                    py_repr(at(cp, i)),
                    py_repr(at(cm, i)),
                    py_repr(at(ex, i))
                )
            })
            .collect();
        o.push_str(&format!(", \"hosts\": [{}]", rows.join(", ")));
    }
    if let Some(b) = h.bin_ps.filter(|b| *b != 0) {
        let bin_s = b as f64 * 1e-12;
        let gbps: Vec<String> = u64s(&tables.timeline, "timeline.rx_payload_bytes")
            .iter()
            .map(|&x| {
                let g = x as f64 * 8.0 / bin_s / 1e9;
                // Python's round(x, 6): the correctly rounded 6-decimal value, read back as a float.
                py_repr(format!("{g:.6}").parse::<f64>().unwrap_or(g))
            })
            .collect();
        o.push_str(&format!(", \"throughput\": {{\"bin_s\": {}, \"gbps\": [{}]}}", py_repr(bin_s), gbps.join(", ")));
    }
    let rt = &tables.roce;
    if rt.get("roce.pause_tx").is_some() {
        let sum = |v: &[u64]| v.iter().map(|&a| a as u128).sum::<u128>();
        o.push_str(&format!(
            ", \"pfc_pauses\": {}, \"pfc_paused_s\": {}, \"ecn_marks\": {}, \"cnps\": {}",
            sum(u64s(rt, "roce.pause_tx")),
            py_repr(sum(u64s(rt, "roce.paused_ps")) as f64 * PS),
            sum(u64s(rt, "roce.ecn_marks")),
            h.cnps.unwrap_or(0)
        ));
    }
    o.push_str(", \"deadlock\": ");
    o.push_str(&h.deadlock.map(json_str).unwrap_or_else(|| "null".into()));
    if let Some(f) = &h.fast_forward {
        o.push_str(&format!(
            ", \"fast_forward\": {{\"window_ps\": {}, \"jumps\": {}, \"skipped_ps\": {}, \"skipped_packets\": {}, \"note\": {}, \"extrapolated\": \"counts inside jumps are extrapolated from the steady windows before each jump, not simulated\"}}",
            f.window_ps,
            f.jumps,
            f.skipped_ps,
            f.skipped_packets,
            f.note.map(json_str).unwrap_or_else(|| "null".into())
        ));
    }
    if let Some(r) = &h.retransmit {
        o.push_str(&format!(
            ", \"retransmit\": {{\"lost_packets\": {}, \"timeouts\": {}, \"packets\": {}, \"bytes\": {}, \"abandoned\": {}}}",
            r.lost_packets, r.timeouts, r.packets, r.bytes, r.abandoned
        ));
    }
    if let Some(u) = &h.uec {
        o.push_str(&format!(
            ", \"uec\": {{\"data_packets\": {}, \"trims\": {}, \"trimmed_received\": {}, \"nacks\": {}, \"acks\": {}, \"ecn_echoes\": {}, \"timeouts\": {}, \"retransmits\": {}, \"duplicates\": {}, \"out_of_order\": {}, \"pulls\": {}, \"timer_acks\": {}}}",
            u.data_packets, u.trims, u.trimmed_received, u.nacks, u.acks, u.ecn_echoes, u.timeouts, u.retransmits, u.duplicates, u.out_of_order, u.pulls, u.timer_acks
        ));
    }
    if !h.net_events.is_empty() {
        let rows: Vec<String> = h
            .net_events
            .iter()
            .map(|e| {
                let links: Vec<String> = e.links.iter().map(|l| json_str(l)).collect();
                let ber = match e.kind.as_str() {
                    "ber" => format!(", \"ber\": {}", py_repr(e.ber)),
                    "link_rate" => format!(", \"rate_bps\": {}", e.rate_bps),
                    _ => String::new(),
                };
                format!("{{\"t_s\": {}, \"kind\": {}, \"links\": [{}]{ber}}}", py_repr(e.t_ps as f64 / 1e12), json_str(&e.kind), links.join(", "))
            })
            .collect();
        o.push_str(&format!(", \"network_events\": [{}]", rows.join(", ")));
    }
    o.push('}');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_repr_by_hand() {
        assert_eq!(py_repr(1e-6), "1e-06");
        assert_eq!(py_repr(1.5e-5), "1.5e-05");
        assert_eq!(py_repr(0.0001), "0.0001");
        assert_eq!(py_repr(12.553e-6), "1.2553e-05");
        assert_eq!(py_repr(2.0), "2.0");
        assert_eq!(py_repr(123456789.0), "123456789.0");
        assert_eq!(py_repr(1e16), "1e+16");
        assert_eq!(py_repr(0.1), "0.1");
        assert_eq!(py_repr(0.0), "0.0");
        assert_eq!(py_repr(1234.5), "1234.5");
    }

    #[test]
    fn the_rate_at_the_end_of_a_rated_link() {
        use crate::record::NetEventRow;
        let ev = |t_ps, links: &[&str], rate_bps| NetEventRow {
            t_ps,
            kind: "link_rate".into(),
            links: links.iter().map(|l| l.to_string()).collect(),
            ber: 0.0,
            rate_bps,
        };
        // a-b halved at 1 µs then restored at 2 µs; b-c quartered at 5 µs, after a 3 µs run's end; a link_down
        // sets no rate.
        let mut down = ev(1_000_000, &["c-d"], 0);
        down.kind = "link_down".into();
        let events = [ev(1_000_000, &["a-b"], 5), ev(2_000_000, &["a-b"], 10), ev(5_000_000, &["b-c"], 2), down];
        let rated = rated_links(&events, 3_000_000);
        assert_eq!(rated, vec![("a-b".to_string(), 10)]);
        // Both directions, and every parallel link between the two nodes (the events name each "a-b").
        for q in ["a->b", "b->a", "a->b#1"] {
            assert_eq!(rate_end(&rated, q), Some(10), "{q}");
        }
        for q in ["b->c", "a->c", "ab", "c->d"] {
            assert_eq!(rate_end(&rated, q), None, "{q}");
        }
        assert_eq!(rated_links(&events, 1_500_000), vec![("a-b".to_string(), 5)]);
    }

    #[test]
    fn links_by_hand() {
        // Two 10 Gb/s ports over a 1 ms span: a->b sent 625,000 B (5 Gb of 10 Gb/ms: 50%), b->a 1,250,000 B (100%);
        // b->a comes first (busiest), and a flow-fidelity record has no peak queue.
        let mut r = RunRecord { completion_ps: Some(1_000_000_000), end_ps: 2_000_000_000, ..Default::default() };
        let q = &mut r.queues;
        q.name = vec!["a->b".into(), "b->a".into()];
        (q.node, q.port) = (vec![0, 1], vec![0, 0]);
        (q.tx_packets, q.tx_bytes, q.drops) = (vec![625, 1250], vec![625_000, 1_250_000], vec![0, 3]);
        (q.peak_packets, q.peak_bytes, q.rate_bps) = (vec![2, 7], vec![2000, 7000], vec![10_000_000_000; 2]);
        let span = links_span_ps(r.completion_ps, r.end_ps);
        assert_eq!(span, 1_000_000_000);
        let (qt, rt) = (Table::of_record(&r, "queues"), Table::of_record(&r, "roce"));
        let got = links_json("packet", span, &qt, &rt, &Names::of_record(&r), &[]);
        assert_eq!(
            got,
            "[{\"name\": \"b->a\", \"rate_bps\": 10000000000, \"bytes\": 1250000, \"packets\": 1250, \"utilization\": 1.0, \
             \"gbps\": 10.0, \"peak_bytes\": 7000, \"peak_packets\": 7, \"pfc_pauses\": 0, \"drops\": 3}, \
             {\"name\": \"a->b\", \"rate_bps\": 10000000000, \"bytes\": 625000, \"packets\": 625, \"utilization\": 0.5, \
             \"gbps\": 5.0, \"peak_bytes\": 2000, \"peak_packets\": 2, \"pfc_pauses\": 0, \"drops\": 0}]"
        );
        let flow = links_json("flow", span, &qt, &rt, &Names::of_record(&r), &[]);
        assert!(flow.contains("\"peak_bytes\": null, \"peak_packets\": null"));
        // Without a completion the span is the end: half the utilization.
        assert_eq!(links_span_ps(None, 2_000_000_000), 2_000_000_000);
    }

    #[test]
    fn python_g6_and_thousands_by_hand() {
        assert_eq!(py_g6(0.001), "0.001");
        assert_eq!(py_g6(1.2553e-5), "1.2553e-05");
        assert_eq!(py_g6(123456789.0), "1.23457e+08");
        assert_eq!(py_g6(0.5), "0.5");
        assert_eq!(py_g6(100.0), "100");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
    }
}
