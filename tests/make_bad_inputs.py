"""Regenerate tests/bad_inputs/*.toml, the corpus of malformed and impossible scenarios (run from the repo root)."""

from pathlib import Path

BASE_TOPO = '''[topology]
kind = "custom"
nodes = [{name = "a", kind = "host"}, {name = "s", kind = "switch"}, {name = "b", kind = "host"}]
links = [{a = "a", b = "s", rate = "1Gbps"}, {a = "s", b = "b", rate = "1Gbps"}]
'''
MSG = '''[[messages]]
name = "m"
src = "a"
dst = "b"
size = "1MiB"
'''
SRC = '''[[sources]]
kind = "cbr"
src = "a"
dst = "b"
rate = "10Mbps"
stop = "1s"
'''


def sub(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


CASES: dict[str, tuple[str, str]] = {
    "syntax_error": ("line 2: TOML syntax error", "[topology\nkind = 'custom'\n"),
    "unknown_top_key": ("colour: unknown key", 'colour = "red"\n' + BASE_TOPO + MSG),
    "unknown_topology_key": ("topology.foo: unknown key", sub(BASE_TOPO, 'kind = "custom"', 'kind = "custom"\nfoo = 1') + MSG),
    "unknown_message_key": ("messages[0].sizee: unknown key", BASE_TOPO + MSG + "sizee = 3\n"),
    "unknown_topology_kind": ("unknown kind 'torus'", '[topology]\nkind = "torus"\n'),
    "wrong_type_seed": ("seed", 'seed = "one"\n' + BASE_TOPO + MSG),
    "negative_seed": ("seed", "seed = -1\n" + BASE_TOPO + MSG),
    "boolean_rate": ("topology.links[0].rate", sub(BASE_TOPO, 'rate = "1Gbps"', "rate = true") + MSG),
    "negative_rate": ("topology.links[0].rate", sub(BASE_TOPO, 'rate = "1Gbps"', 'rate = "-1Gbps"') + MSG),
    "zero_rate": ("topology.links[1].rate", BASE_TOPO.replace('b = "b", rate = "1Gbps"', 'b = "b", rate = 0') + MSG),
    "unknown_rate_unit": ("unknown rate unit 'Gbit'", sub(BASE_TOPO, 'rate = "1Gbps"', 'rate = "1Gbit"') + MSG),
    "nan_rate": ("finite", sub(BASE_TOPO, 'rate = "1Gbps"', "rate = nan") + MSG),
    "negative_delay": ("topology.links[0].delay", sub(BASE_TOPO, 'rate = "1Gbps"', 'rate = "1Gbps", delay = "-5ms"') + MSG),
    "huge_duration": ("stop", 'stop = "1e9s"\n' + BASE_TOPO + MSG),
    "zero_size_message": ("messages[0].size", BASE_TOPO + sub(MSG, 'size = "1MiB"', "size = 0")),
    "negative_size": ("messages[0].size", BASE_TOPO + sub(MSG, 'size = "1MiB"', "size = -5")),
    "huge_message": ("1 TiB limit", BASE_TOPO + sub(MSG, 'size = "1MiB"', 'size = "2TiB"')),
    "absurd_size": ("1 PiB limit", BASE_TOPO + sub(MSG, 'size = "1MiB"', 'size = "10PiB"')),
    "huge_packet": ("65536 B limit", BASE_TOPO + MSG + 'packet_size = "1MB"\n'),
    "zero_packet": ("messages[0].packet_size", BASE_TOPO + MSG + "packet_size = 0\n"),
    "dangling_link": ("unknown node 'ghost'", sub(BASE_TOPO, 'b = "b", rate', 'b = "ghost", rate') + MSG),
    "dangling_message_dst": ("messages[0].dst: unknown node 'ghost'", BASE_TOPO + sub(MSG, 'dst = "b"', 'dst = "ghost"')),
    "dangling_source_src": ("sources[0].src: unknown node 'ghost'", BASE_TOPO + sub(SRC, 'src = "a"', 'src = "ghost"')),
    "dangling_path": ("messages[0].path[1]: unknown node 'x'", BASE_TOPO + MSG + 'path = ["a", "x", "b"]\n'),
    "path_skips_a_hop": ("messages[0].path", BASE_TOPO + MSG + 'path = ["a", "b"]\n'),
    "dangling_port": ("ports[0].node: unknown node 'ghost'", BASE_TOPO + MSG + '[[ports]]\nnode = "ghost"\npeer = "s"\n'),
    "port_without_link": ("ports[0].peer: 'a' has no link to 'b'", BASE_TOPO + MSG + '[[ports]]\nnode = "a"\npeer = "b"\n'),
    "dangling_measure_queue": ("measure.queues[0]", BASE_TOPO + MSG + '[measure]\nqueues = ["a->ghost"]\n'),
    "disconnected_destination": (
        "messages[0].dst: 'b' (NIC 0) is unreachable",
        '[topology]\nkind = "custom"\nnodes = [{name = "a", kind = "host"}, {name = "s", kind = "switch"}, '
        '{name = "t", kind = "switch"}, {name = "b", kind = "host"}]\n'
        'links = [{a = "a", b = "s", rate = "1Gbps"}, {a = "t", b = "b", rate = "1Gbps"}]\n' + MSG,
    ),
    "cyclic_dag": (
        "dependency cycle",
        BASE_TOPO + MSG + 'after = ["n"]\n' + sub(sub(MSG, 'name = "m"', 'name = "n"'), 'size = "1MiB"', 'size = "1MiB"\nafter = ["m"]'),
    ),
    "self_dependency": ("messages[0].after[0]: a message cannot wait for itself", BASE_TOPO + MSG + 'after = ["m"]\n'),
    "unknown_dependency": ("messages[0].after[0]: unknown message 'nope'", BASE_TOPO + MSG + 'after = ["nope"]\n'),
    "duplicate_node": ("duplicate node name 'a'", sub(BASE_TOPO, '{name = "b", kind = "host"}', '{name = "a", kind = "host"}')),
    "duplicate_message": ("messages[1].name: duplicate message name 'm'", BASE_TOPO + MSG + MSG),
    "self_loop_link": ("topology.links[1].b: a link cannot connect a node to itself", BASE_TOPO.replace('{a = "s", b = "b"', '{a = "s", b = "s"') + MSG),
    "switch_as_source": ("messages[0].src: 's' is a switch", BASE_TOPO + sub(MSG, 'src = "a"', 'src = "s"')),
    "nic_out_of_range": ("messages[0].src_nic: 'a' has 1 NIC(s); NIC 3 does not exist", BASE_TOPO + MSG + "src_nic = 3\n"),
    "same_src_dst": ("messages[0].dst_nic: source and destination are the same NIC of one host", BASE_TOPO + sub(MSG, 'dst = "b"', 'dst = "a"')),
    "stop_before_start": ("sources[0].stop: stop is before start", BASE_TOPO + SRC + 'start = "5s"\n'),
    "onoff_without_on": ("sources[0].on", BASE_TOPO + sub(SRC, 'kind = "cbr"', 'kind = "onoff"') + 'off = "1ms"\n'),
    "cbr_with_on": ("sources[0].on: a cbr source has no on/off times", BASE_TOPO + SRC + 'on = "1ms"\n'),
    "unbounded_source": ("sources[0].stop: source 'cbr0' sends forever",
                         BASE_TOPO + sub(SRC, 'stop = "1s"\n', '')),
    "missing_required_field": ("messages[0].size: required field is missing", BASE_TOPO + MSG.replace('size = "1MiB"\n', "")),
    "missing_topology": ("topology: required field is missing", MSG),
    "empty_nodes": ("topology.nodes", '[topology]\nkind = "custom"\nnodes = []\nlinks = []\n'),
    "unknown_ecmp_mode": ("routing.ecmp", BASE_TOPO + MSG + '[routing]\necmp = "random"\n'),
    "zero_queue_limit": ("queue.limit_packets", BASE_TOPO + MSG + "[queue]\nlimit_packets = 0\n"),
    "unknown_qdisc": ("queue.qdisc: unknown kind 'red'", BASE_TOPO + MSG + '[queue]\nqdisc = {kind = "red"}\n'),
    "zero_fat_tree": ("topology.m0", '[topology]\nkind = "fat_tree"\nm0 = 0\nm1 = 2\nrate = "100Gbps"\n'),
    "unknown_fidelity": ("fidelity", 'fidelity = "fluid"\n' + BASE_TOPO + MSG),
    "zero_sample_interval": ("measure.queue_interval", BASE_TOPO + MSG + "[measure]\nqueue_interval = 0\n"),
    "boolean_seed": ("seed: Input should be a valid integer, got True", "seed = true\n" + BASE_TOPO + MSG),
    "string_nic": ("messages[0].src_nic: Input should be a valid integer", BASE_TOPO + MSG + 'src_nic = "0"\n'),
    "byte_rate_unit": ("topology.links[0].rate: rates are in bits", sub(BASE_TOPO, 'rate = "1Gbps"', 'rate = "1GBps"') + MSG),
    "bit_size_unit": ("messages[0].size: sizes are in bytes", BASE_TOPO + sub(MSG, 'size = "1MiB"', 'size = "8Mb"')),
    "duplicate_source_name": ("sources[1].name: duplicate source name 'u'", BASE_TOPO + SRC + 'name = "u"\n' + SRC + 'name = "u"\n'),
    "message_named_like_source": ("messages[0].name: 'm' already names a source", BASE_TOPO + SRC + 'name = "m"\n' + MSG),
    "bad_parallel_link_number": ("measure.queues[0]: 's->b#x'", BASE_TOPO + MSG + '[measure]\nqueues = ["s->b#x"]\n'),
    "host_with_switch_model": ("topology.nodes[0].model: only switches have a switch model",
                               sub(BASE_TOPO, '{name = "a", kind = "host"}', '{name = "a", kind = "host", model = "input_buffered"}') + MSG),
    "input_buffer_too_small": ("topology.nodes[1].input_buffer", sub(BASE_TOPO, '{name = "s", kind = "switch"}',
                               '{name = "s", kind = "switch", model = "input_buffered", input_buffer = 500}') + MSG),
    "links_not_a_list": ("topology.links", sub(BASE_TOPO, 'links = [{a = "a", b = "s", rate = "1Gbps"}, {a = "s", b = "b", rate = "1Gbps"}]', 'links = "a-s-b"')),
}


def main() -> None:
    out = Path(__file__).parent / "bad_inputs"
    out.mkdir(exist_ok=True)
    for old in out.glob("*.toml"):
        old.unlink()
    for name, (expect, text) in CASES.items():
        (out / f"{name}.toml").write_text(f"# expect: {expect}\n{text}")
    (out / "not_utf8.toml").write_bytes(b"# expect: cannot read\nseed = 1\n\xff\xfe\n")


if __name__ == "__main__":
    main()
