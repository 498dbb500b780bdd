//! The `graph` family: a network read from a networkx node-link JSON file or a flat GraphML file, as
//! `fabricsim.topology.graph` reads it (the same nodes and links in the same order, the same values).
//!
//! Every node needs `kind` ("host" or "switch") and may have `latency` (a duration) or `latency_ps`; switches take
//! the family's shared switch settings (a node's own latency wins). Every edge needs `rate` (a rate) or
//! `rate_bps`, and may have `delay` / `delay_ps` and `weight` (an integer 1..255). Links keep the file's order
//! unless every edge has a distinct integer key (node-link `key`, GraphML edge `id`): then key order. A bad file
//! is one error naming the graph file and the node or edge (`topo.graphml: edge ('a', 'zz'): node 'zz' does not
//! exist`, `Decline::in_file`); a rate Python would warn about (below 1 Mb/s) is a warning.

use super::{Link, Network, Node, Switches};
use crate::scenario::read::{self, Tab};
use crate::scenario::Decline;
use serde_json::Value as J;
use std::path::{Path, PathBuf};
use toml::Value;

/// A node or edge attribute: the file's value (node-link JSON as it is; GraphML typed by its <key> declaration).
type Attrs = serde_json::Map<String, J>;
/// Nodes (id, attributes) and edges (source id, target id, attributes), in file order.
type Raw = (Vec<(J, Attrs)>, Vec<(J, J, Attrs)>);

/// The graph file's path: as written if absolute, else relative to `base` (the scenario file's folder).
pub fn resolve(file: &str, base: Option<&Path>) -> PathBuf {
    let p = Path::new(file);
    match base {
        Some(b) if !p.is_absolute() => b.join(p),
        _ => p.to_path_buf(),
    }
}

/// Python's `repr` of a node id (a string in quotes, an integer as it is).
fn repr(id: &J) -> String {
    match id {
        J::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

/// A key telling ids apart as Python's dict does (the integer 1 and the string "1" are different nodes).
fn id_key(id: &J) -> String {
    match id {
        J::String(s) => format!("s{s}"),
        other => format!("n{other}"),
    }
}

/// `topology (graph)`'s `build`: the settings, the file resolved against `base`, read and built.
pub fn build(t: &mut Tab, base: Option<&Path>) -> Result<Network, Decline> {
    let file = t.req("file", read::string)?;
    let sw = Switches::read(t)?;
    let path = resolve(&file, base);
    let suffix = path.extension().and_then(|s| s.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let shown = path.display().to_string();
    let fail = |where_: &str, msg: String| Decline::in_file(shown.clone(), where_, msg);
    if suffix != "json" && suffix != "graphml" {
        return Err(Decline::new(format!("topology.file: '{file}': the graph file's suffix must be .json (networkx node-link) or .graphml")));
    }
    if !path.is_file() {
        return Err(Decline::new(format!("topology.file: cannot read '{file}' ({shown}): no such file")));
    }
    let (raw_nodes, raw_edges) = if suffix == "json" { read_node_link(&path, &fail)? } else { read_graphml(&path, &fail)? };
    if raw_nodes.is_empty() {
        return Err(fail("", "the graph has no nodes".into()));
    }
    if raw_edges.is_empty() {
        return Err(fail("", "the graph has no edges (links)".into()));
    }
    let mut names: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut taken = std::collections::HashSet::new();
    let mut net = Network::default();
    for (nid, attrs) in &raw_nodes {
        let at = format!("node {}", repr(nid));
        let name = match nid {
            J::String(s) => s.clone(),
            other => other.to_string(),
        };
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || ":>#".contains(c)) {
            return Err(fail(&at, "a node id must be non-empty, without whitespace, ':', '>' or '#'".into()));
        }
        if !taken.insert(name.clone()) {
            return Err(fail(&at, "declared twice".into()));
        }
        let kind = attrs.get("kind");
        let host = match kind.and_then(J::as_str) {
            Some("host") => true,
            Some("switch") => false,
            _ => {
                let got = kind.map(|k| format!(", got {}", repr(k))).unwrap_or_default();
                return Err(fail(&at, format!("needs the attribute kind = \"host\" or \"switch\"{got}")));
            }
        };
        let latency = quantity(attrs, "latency", false, &at, &fail)?;
        net.nodes.push(if host { Node { latency_ps: latency.unwrap_or(0), ..Node::host(name.clone()) } } else { sw.node(name.clone(), latency) });
        names.insert(id_key(nid), name);
    }
    for (u, v, attrs) in in_key_order(raw_edges) {
        let at = format!("edge ({}, {})", repr(&u), repr(&v));
        for end in [&u, &v] {
            if !names.contains_key(&id_key(end)) {
                return Err(fail(&at, format!("node {} does not exist", repr(end))));
            }
        }
        if id_key(&u) == id_key(&v) {
            return Err(fail(&at, "a link joins two different nodes".into()));
        }
        let rate = quantity(&attrs, "rate", true, &at, &fail)?
            .ok_or_else(|| fail(&at, "needs the attribute rate (\"100Gbps\", or bit/s) or rate_bps".into()))?;
        if rate == 0 {
            return Err(fail(&at, "rate must be > 0".into()));
        }
        let delay = quantity(&attrs, "delay", false, &at, &fail)?.unwrap_or(0);
        let weight = match attrs.get("weight") {
            None => 1,
            Some(J::Number(n)) if n.as_u64().is_some_and(|w| w >= 1) => n.as_u64().unwrap_or(1),
            Some(J::Number(n)) if n.as_f64().is_some_and(|w| w >= 1.0 && w.fract() == 0.0 && w < 1e15) => n.as_f64().unwrap_or(1.0) as u64,
            Some(other) => return Err(fail(&at, format!("weight must be an integer ≥ 1, got {}", repr(other)))),
        };
        if weight > 255 {
            return Err(fail(&at, format!("weight must be an integer from 1 to 255, got {weight}")));
        }
        let (a, b) = (names[&id_key(&u)].clone(), names[&id_key(&v)].clone());
        net.links.push(Link { a, b, rate_bps: rate, delay_ps: delay, weight });
    }
    Ok(net)
}

/// The edges sorted by their `key` if every edge has a distinct integer one (an integer, or a string of
/// digits), else as they are. O(E log E).
fn in_key_order(edges: Vec<(J, J, Attrs)>) -> Vec<(J, J, Attrs)> {
    let keys: Option<Vec<u64>> = edges
        .iter()
        .map(|(_, _, a)| match a.get("key") {
            Some(J::Number(n)) => n.as_u64(),
            Some(J::String(s)) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && s.len() < 19 => s.parse().ok(),
            _ => None,
        })
        .collect();
    let Some(keys) = keys else { return edges };
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return edges;
    }
    let mut paired: Vec<(u64, (J, J, Attrs))> = keys.into_iter().zip(edges).collect();
    paired.sort_by_key(|(k, _)| *k);
    paired.into_iter().map(|(_, e)| e).collect()
}

/// Attribute `key` (a number in the base unit or a string with a unit) or `{key}_ps` / `{key}_bps` (an integer),
/// or None if neither is there. A rate below 1 Mb/s declines (Python warns).
fn quantity(attrs: &Attrs, key: &str, rate: bool, at: &str, fail: &dyn Fn(&str, String) -> Decline) -> Result<Option<u64>, Decline> {
    let exact = format!("{key}_{}", if rate { "bps" } else { "ps" });
    if let Some(v) = attrs.get(&exact) {
        return match v {
            J::Number(n) if n.as_u64().is_some() => Ok(n.as_u64()),
            J::Number(n) if n.as_f64().is_some_and(|x| x >= 0.0 && x.fract() == 0.0 && x < 1.8e19) => Ok(n.as_f64().map(|x| x as u64)),
            other => Err(fail(at, format!("{exact} must be an integer ≥ 0, got {}", repr(other)))),
        };
    }
    let Some(v) = attrs.get(key) else { return Ok(None) };
    let tv = match v {
        J::String(s) => Value::String(s.clone()),
        J::Number(n) if n.is_i64() => Value::Integer(n.as_i64().unwrap_or(0)),
        J::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        J::Bool(b) => Value::Boolean(*b),
        _ => return Err(fail(at, format!("{key}: cannot read {v} as a quantity"))),
    };
    let parsed = if rate { crate::scenario::units::fabric_rate_bps(&tv) } else { crate::scenario::units::duration_ps(&tv) };
    match parsed {
        Ok(x) => Ok(Some(x)),
        // The warning names the file `fail` names ("g.json: edge ('a', 's'): rate = 100 means ...").
        Err(d) if d.kind == crate::scenario::DeclineKind::Warning => {
            Err(Decline { file: fail(at, String::new()).file, ..Decline::warning(format!("{at}: {key}{}", d.text)) })
        }
        Err(d) => Err(fail(at, format!("{key}: {}", d.text))),
    }
}

/// Nodes and edges of a networkx node-link JSON document ({"nodes": [{"id": …, attrs}], "edges" or "links":
/// [{"source": …, "target": …, attrs}]}).
fn read_node_link(path: &Path, fail: &dyn Fn(&str, String) -> Decline) -> Result<Raw, Decline> {
    let text = std::fs::read_to_string(path).map_err(|e| fail("", format!("cannot read: {e}")))?;
    let doc: J = serde_json::from_str(&text).map_err(|e| fail(&format!("line {}", e.line()), format!("JSON syntax error: {e}")))?;
    let Some(list) = doc.get("nodes").and_then(J::as_array) else {
        return Err(fail("", "not a node-link document: expected an object with a \"nodes\" list".into()));
    };
    let key = if doc.get("edges").is_some() { "edges" } else { "links" };
    let edges_v = match doc.get(key) {
        None => Vec::new(),
        Some(J::Array(a)) => a.clone(),
        Some(_) => return Err(fail(key, "expected a list of edges".into())),
    };
    let mut nodes = Vec::with_capacity(list.len());
    for (i, n) in list.iter().enumerate() {
        let id = n.get("id").filter(|id| id.is_string() || id.is_i64() || id.is_u64());
        let (Some(J::Object(m)), Some(id)) = (Some(n).filter(|n| n.is_object()), id) else {
            return Err(fail(&format!("nodes[{i}]"), "a node is an object with an \"id\" (a string or an integer)".into()));
        };
        let attrs: Attrs = m.iter().filter(|(k, _)| k.as_str() != "id").map(|(k, v)| (k.clone(), v.clone())).collect();
        nodes.push((id.clone(), attrs));
    }
    let mut edges = Vec::with_capacity(edges_v.len());
    for (i, e) in edges_v.iter().enumerate() {
        let (Some(m), Some(s), Some(t)) = (e.as_object(), e.get("source"), e.get("target")) else {
            return Err(fail(&format!("{key}[{i}]"), "an edge is an object with a \"source\" and a \"target\"".into()));
        };
        if !(s.is_string() || s.is_i64() || s.is_u64()) || !(t.is_string() || t.is_i64() || t.is_u64()) {
            return Err(fail(&format!("{key}[{i}]"), "an edge's source and target are node ids (strings or integers)".into()));
        }
        let attrs: Attrs = m.iter().filter(|(k, _)| !matches!(k.as_str(), "source" | "target")).map(|(k, v)| (k.clone(), v.clone())).collect();
        edges.push((s.clone(), t.clone(), attrs));
    }
    Ok((nodes, edges))
}

/// A GraphML <data> or <default> text as its declared type (int, long, float, double, boolean, string).
fn typed(text: &str, typ: &str, at: &str, fail: &dyn Fn(&str, String) -> Decline) -> Result<J, Decline> {
    let t = text.trim();
    let bad = || fail(at, format!("cannot read '{t}' as {typ}"));
    Ok(match typ {
        "boolean" => J::Bool(matches!(t.to_ascii_lowercase().as_str(), "true" | "1")),
        "int" | "long" => J::from(t.replace('_', "").parse::<i64>().map_err(|_| bad())?),
        "float" | "double" => {
            let x = t.parse::<f64>().map_err(|_| bad())?;
            serde_json::Number::from_f64(x).map(J::Number).ok_or_else(bad)?
        }
        _ => J::String(t.to_string()),
    })
}

/// Nodes and edges of a flat GraphML document, attributes typed by their <key> declarations (defaults
/// included), an edge's `id` as its `key`.
fn read_graphml(path: &Path, fail: &dyn Fn(&str, String) -> Decline) -> Result<Raw, Decline> {
    let text = std::fs::read_to_string(path).map_err(|e| fail("", format!("cannot read: {e}")))?;
    let doc = roxmltree::Document::parse(&text).map_err(|e| {
        let p = e.pos();
        fail(&format!("line {}", p.row), format!("GraphML syntax error (column {})", p.col))
    })?;
    let root = doc.root_element();
    let mut keys: std::collections::HashMap<String, (String, String)> = std::collections::HashMap::new();
    let mut defaults: [Attrs; 2] = [Attrs::new(), Attrs::new()];
    for k in root.children().filter(|c| c.is_element() && c.tag_name().name() == "key") {
        let kid = k.attribute("id").unwrap_or("").to_string();
        let name = k.attribute("attr.name").unwrap_or(&kid).to_string();
        let typ = k.attribute("attr.type").unwrap_or("string").to_string();
        let dom = k.attribute("for").unwrap_or("all").to_string();
        for d in k.children().filter(|c| c.is_element() && c.tag_name().name() == "default") {
            let v = typed(d.text().unwrap_or(""), &typ, &format!("key '{kid}'"), fail)?;
            for (slot, which) in [(0, "node"), (1, "edge")] {
                if dom == which || dom == "all" {
                    defaults[slot].insert(name.clone(), v.clone());
                }
            }
        }
        keys.insert(kid, (name, typ));
    }
    let Some(graph) = root.children().find(|c| c.is_element() && c.tag_name().name() == "graph") else {
        return Err(fail("", "not a GraphML document: no <graph> element".into()));
    };
    let data = |el: roxmltree::Node, slot: usize, at: &str| -> Result<Attrs, Decline> {
        let mut out = defaults[slot].clone();
        for d in el.children().filter(|c| c.is_element() && c.tag_name().name() == "data") {
            let key = d.attribute("key").unwrap_or("");
            let (name, typ) = keys.get(key).ok_or_else(|| fail(at, format!("data for the undeclared key '{key}'")))?;
            out.insert(name.clone(), typed(d.text().unwrap_or(""), typ, at, fail)?);
        }
        Ok(out)
    };
    let (mut nodes, mut edges) = (Vec::new(), Vec::new());
    for el in graph.children().filter(|c| c.is_element()) {
        match el.tag_name().name() {
            "node" => {
                let id = J::String(el.attribute("id").unwrap_or("").to_string());
                let at = format!("node {}", repr(&id));
                nodes.push((id, data(el, 0, &at)?));
            }
            "edge" => {
                let (u, v) = (J::String(el.attribute("source").unwrap_or("").into()), J::String(el.attribute("target").unwrap_or("").into()));
                let mut attrs = data(el, 1, &format!("edge ({}, {})", repr(&u), repr(&v)))?;
                if let Some(id) = el.attribute("id") {
                    attrs.entry("key").or_insert_with(|| J::String(id.into()));
                }
                edges.push((u, v, attrs));
            }
            _ => {}
        }
    }
    Ok((nodes, edges))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAPHML: &str = r#"<?xml version="1.0"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="k" for="node" attr.name="kind" attr.type="string"/>
  <key id="r" for="edge" attr.name="rate" attr.type="string"><default>10Gbps</default></key>
  <key id="w" for="edge" attr.name="weight" attr.type="int"/>
  <graph edgedefault="undirected">
    <node id="a"><data key="k">host</data></node>
    <node id="s"><data key="k">switch</data></node>
    <node id="b"><data key="k">host</data></node>
    <edge id="1" source="s" target="b"><data key="r">100Gbps</data><data key="w">3</data></edge>
    <edge id="0" source="a" target="s"/>
  </graph>
</graphml>"#;

    fn built(name: &str, text: &str, extra: &str) -> Result<Network, Decline> {
        let dir = std::env::temp_dir().join(format!("fabricsim-graph-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
        let v: Value = Value::Table(format!("file = \"{name}\"\n{extra}").parse().unwrap());
        let mut t = Tab::of(&v, "topology").unwrap();
        build(&mut t, Some(&dir))
    }

    #[test]
    fn graphml_nodes_in_file_order_links_in_id_order_defaults_applied() {
        let net = built("g.graphml", GRAPHML, "switch_latency = \"1us\"").unwrap();
        let names: Vec<&str> = net.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["a", "s", "b"]);
        assert_eq!((net.nodes[1].host, net.nodes[1].latency_ps, net.nodes[0].latency_ps), (false, 1_000_000, 0));
        // Edge ids 1 and 0 are distinct integers: links in id order; the edge without a rate takes the key's default.
        let links: Vec<(&str, &str, u64, u64)> = net.links.iter().map(|l| (l.a.as_str(), l.b.as_str(), l.rate_bps, l.weight)).collect();
        assert_eq!(links, [("a", "s", 10_000_000_000, 1), ("s", "b", 100_000_000_000, 3)]);
    }

    #[test]
    fn node_link_json_and_its_errors_name_the_element() {
        let doc = r#"{"nodes": [{"id": "h", "kind": "host"}, {"id": 7, "kind": "switch", "latency": "300ns"}],
                      "links": [{"source": "h", "target": 7, "rate_bps": 25000000000, "delay": "1us"}]}"#;
        let net = built("g.json", doc, "").unwrap();
        assert_eq!((net.nodes[1].name.as_str(), net.nodes[1].latency_ps), ("7", 300_000));
        assert_eq!((net.links[0].rate_bps, net.links[0].delay_ps), (25_000_000_000, 1_000_000));
        let e = built("m.json", &doc.replace("\"target\": 7", "\"target\": \"zz\""), "").unwrap_err();
        assert!(e.report().ends_with("m.json: edge ('h', 'zz'): node 'zz' does not exist"), "{}", e.text);
        let e = built("k.json", &doc.replace("\"kind\": \"host\"", "\"kind\": \"router\""), "").unwrap_err();
        assert!(e.report().ends_with("k.json: node 'h': needs the attribute kind = \"host\" or \"switch\", got 'router'"), "{}", e.text);
    }
}
