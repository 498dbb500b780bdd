//! `[uec]`: the Ultra Ethernet transport (`transport = "uec"`), declared once (`UEC`) and read into the engine's
//! `UecSpec` (defaults and validation are the engine's; errors name the user's key). docs/uec_parameters.md gives
//! the source of every default.

use super::keys::{defaulted, defaulted_schema, key, Key, Kind};
use super::Decline;
use crate::uec::UecSpec;
use serde_json::Value as J;
use toml::Value;

/// `[uec]`'s keys.
pub const UEC: &[Key] = &[
    key(
        "cc",
        Kind::Choice(&["nscc", "rccc", "none"]),
        "cc",
        "Congestion control: \"nscc\" (sender window on ECN marks and queueing delay, htsim_uec's default), \"rccc\" (receiver credit paced at just under the receiver's line rate) or \"none\" (a fixed window of 1.5 BDP).",
    ),
    key(
        "spray",
        Kind::Choice(&["oblivious", "reps", "ecmp", "bitmap", "mixed"]),
        "spray",
        "Packet spraying: \"oblivious\" (every entropy in turn, reshuffled each round), \"reps\" (recycle the entropies that came back unmarked), \"ecmp\" (one entropy per connection: per-flow ECMP), \"bitmap\" (the oblivious cycle, skipping entropies that came back marked, NACKed or timed out) or \"mixed\" (htsim_uec's own default: an entropy an unmarked ACK brought back, else the bitmap's).",
    ),
    key("entropies", Kind::Count32, "entropies", "Entropy values a connection sprays over: a power of two, 2 to 65536 for oblivious and reps (htsim's -paths, 64)."),
    key(
        "trimming",
        Kind::Bool,
        "trimming",
        "Switches trim a data packet that finds its queue full to its header, which goes ahead at high priority and makes the receiver NACK it (output_queued and shared_buffer switches); false drops it, and the retransmission timeout recovers it.",
    ),
    key("trim_size", Kind::PosSize, "trim_bytes", "Wire size of a trimmed packet (at least the header; htsim's -trimsize, 64 B)."),
    key("mtu", Kind::PosSize, "mtu_bytes", "Largest packet on the wire, header included (htsim's -mtu, 4150 B: 4086 B of payload). The messages' own packet sizes are the message transport's and do not apply."),
    key("header", Kind::PosSize, "header_bytes", "Header bytes of every data packet (64 B)."),
    key("ack_size", Kind::PosSize, "ack_bytes", "Wire size of an ACK, NACK or credit (pull) packet (64 B)."),
    key("ack_every", Kind::PosSize, "ack_every_bytes", "The receiver acknowledges once this many bytes arrived since its last ACK (16 KiB), and at once for an ECN-marked packet, a packet asking for an ACK, or a duplicate."),
    key(
        "ack_timer",
        Kind::PosDuration,
        "ack_timer_ps",
        "The receiver's ACK coalescing timer, a duration such as \"2us\": bytes left unacknowledged this long get an ACK (unset: no timer, as htsim_uec, whose receiver acknowledges by bytes, ECN marks and the sender's requests only; then a connection whose window shrank below its bytes in flight waits for its retransmission timeout).",
    ),
    key(
        "rto",
        Kind::AutoPosDuration,
        "rto_ps",
        "Retransmission timeout after a packet's send with no ACK or NACK for it (\"auto\": 15 us plus six drain times of a switch queue at the NIC rate, as htsim_uec).",
    ),
    key("base_rtt", Kind::AutoPosDuration, "base_rtt_ps", "NSCC's base round trip (\"auto\": the fabric's largest unloaded round trip of an MTU packet and its ACK, as htsim_uec)."),
    key(
        "target_delay",
        Kind::AutoPosDuration,
        "target_qdelay_ps",
        "NSCC's target queueing delay (\"auto\": 0.75 x the base RTT with trimming, 1 x without).",
    ),
    key(
        "max_window",
        Kind::AutoSize,
        "max_window_bytes",
        "NSCC's largest window, and RCCC's credit cap (\"auto\": 1.5 x the base BDP at the NIC's rate, as htsim_uec; a smaller base RTT sample lowers it with the BDP, a set value stays).",
    ),
    key("ecn_low", Kind::AutoSize, "ecn_low_bytes", "ECN marking starts above this queue depth at switch egress when the scenario has no [ecn] (\"auto\": 0.2 BDP in whole MTU packets)."),
    key("ecn_high", Kind::AutoSize, "ecn_high_bytes", "ECN marks every packet above this queue depth, linearly from ecn_low (\"auto\": 0.8 BDP in whole MTU packets)."),
    key("pull_packets", Kind::Count32, "pull_packets", "RCCC: credit each pull grants, in full packets (4)."),
    key("pull_rate", Kind::Real, "pull_rate", "RCCC: the receiver's pacer grants credit at this share of its line rate (0.99)."),
];

const DOC: &str = "The Ultra Ethernet transport (`transport = \"uec\"`; docs/guide/ultra-ethernet.md, defaults from uet-htsim's htsim_uec in docs/uec_parameters.md): every message is one connection that sprays its packets over `entropies` paths, acknowledges selectively (a receive bitmap accepts packets out of order), recovers a trimmed packet by its NACK and a lost one by a timeout, and runs congestion control `cc`. The record's `uec` section counts trims, NACKs, retransmissions and timeouts, and logs each connection's window or credit over time.";

/// The schema of `[uec]` (defaults: `UecSpec::default()`'s).
pub fn schema() -> J {
    defaulted_schema::<UecSpec>(DOC, UEC)
}

/// `[uec]` as the engine's wire object (every field, defaults filled), validated.
pub fn uec(v: Option<&Value>) -> Result<J, Decline> {
    let empty = Value::Table(toml::Table::new());
    defaulted(v.unwrap_or(&empty), "uec", UEC, UecSpec::validate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Value {
        Value::Table(s.parse().unwrap())
    }

    #[test]
    fn defaults_are_htsim_uecs_and_errors_name_the_users_key() {
        let d = uec(None).unwrap();
        assert_eq!(d["mtu_bytes"], 4150);
        assert_eq!(d["entropies"], 64);
        assert_eq!(d["cc"], "nscc");
        assert_eq!(d["spray"], "mixed");
        assert_eq!(d["trimming"], true);
        assert!(d["rto_ps"].is_null());
        let set = uec(Some(&doc("cc = \"rccc\"\nspray = \"reps\"\nentropies = 16\nrto = \"50us\""))).unwrap();
        assert_eq!((set["cc"].as_str(), set["entropies"].as_u64(), set["rto_ps"].as_u64()), (Some("rccc"), Some(16), Some(50_000_000)));
        let e = uec(Some(&doc("spray = \"reps\"\nentropies = 1"))).unwrap_err();
        assert!(e.text.starts_with("uec.entropies: spray = \"reps\" recycles entropies"), "{e:?}");
        let e = uec(Some(&doc("entropies = 12"))).unwrap_err();
        assert_eq!(e.text, "uec.entropies: must be a power of two from 1 to 65536, not 12");
        let e = uec(Some(&doc("trim_size = 10"))).unwrap_err();
        assert!(e.text.starts_with("uec.trim_size: a trimmed packet keeps at least its 64 B header"), "{e:?}");
        let e = uec(Some(&doc("cc = \"dcqcn\""))).unwrap_err();
        assert!(e.text.starts_with("uec.cc: "), "{e:?}");
        let e = uec(Some(&doc("window = 3"))).unwrap_err();
        assert!(e.text.starts_with("uec.window: unknown key"), "{e:?}");
    }
}
