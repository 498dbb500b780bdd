//! The Ultra Ethernet transport's wire spec (`[uec]`): congestion control, packet spraying, trimming and the
//! reliability knobs. Defaults follow uet-htsim's `htsim_uec` (sim/datacenter/main_uec.cpp and sim/uec.cpp at
//! ultraethernet/uet-htsim 40ccb05); docs/uec_parameters.md gives the source of each. Sizes are bytes, times ps.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The congestion control of a UEC connection.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UecCc {
    /// Network-signal CC: a sender window driven by ECN marks and queueing delay (htsim's default, `-sender_cc`).
    #[default]
    Nscc,
    /// Receiver credit: the receiver's pacer grants credit at just under its line rate (`-receiver_cc_only`).
    Rccc,
    /// No congestion control: the window stays at its maximum (1.5 BDP).
    None,
}

/// How a connection picks each packet's entropy value (EV), which the switches hash to pick among equal-cost
/// next hops.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum UecSpray {
    /// Every EV in turn, in an order reshuffled each round (htsim's UecMpOblivious).
    Oblivious,
    /// Recycled entropy: re-use the EVs that came back unmarked, else a random one (UecMpReps).
    Reps,
    /// One EV for the whole connection: per-flow ECMP.
    Ecmp,
    /// The oblivious cycle, skipping EVs that came back marked, NACKed or timed out (UecMpBitmap).
    Bitmap,
    /// htsim_uec's default: an EV an unmarked ACK brought back, else the bitmap's (UecMpMixed).
    #[default]
    Mixed,
}

/// `[uec]`: every message (and collective) runs over the UEC transport, one connection per message.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UecSpec {
    #[serde(default)]
    pub cc: UecCc,
    #[serde(default)]
    pub spray: UecSpray,
    /// Entropy values a connection sprays over (a power of two; htsim's `-paths`, 64).
    #[serde(default = "UecSpec::default_entropies")]
    pub entropies: u32,
    /// Switches trim a data packet that finds its queue full to its header instead of dropping it.
    #[serde(default = "UecSpec::default_true")]
    pub trimming: bool,
    /// Wire bytes of a trimmed packet (htsim's `-trimsize`, 64).
    #[serde(default = "UecSpec::default_64")]
    pub trim_bytes: u32,
    /// Largest packet on the wire, header included (htsim's `-mtu`, 4,150 B: 4,086 B of payload).
    #[serde(default = "UecSpec::default_mtu")]
    pub mtu_bytes: u32,
    /// Header bytes of every data packet (htsim's `UecSrc::_hdr_size`, 64).
    #[serde(default = "UecSpec::default_64")]
    pub header_bytes: u32,
    /// Wire bytes of an ACK, NACK or credit packet (htsim's `UecAckPacket::ACKSIZE`, 64).
    #[serde(default = "UecSpec::default_64")]
    pub ack_bytes: u32,
    /// The receiver acknowledges once this many bytes arrived unacknowledged (`UecSink::_bytes_unacked_threshold`).
    #[serde(default = "UecSpec::default_ack_every")]
    pub ack_every_bytes: u32,
    /// The receiver's ACK coalescing timer: bytes not acknowledged this long after they arrived get an ACK
    /// (None: no timer, as htsim_uec: a receiver acknowledges by bytes, marks and requests only).
    #[serde(default)]
    pub ack_timer_ps: Option<u64>,
    /// Retransmission timeout; None: 15 µs + 6 queue drain times of a switch queue (main_uec.cpp's `_min_rto`).
    #[serde(default)]
    pub rto_ps: Option<u64>,
    /// NSCC's base RTT; None: the fabric's largest unloaded round trip (main_uec.cpp's `calculate_rtt`).
    #[serde(default)]
    pub base_rtt_ps: Option<u64>,
    /// NSCC's target queueing delay; None: 0.75 × base RTT with trimming, 1 × without (`initNsccParams`).
    #[serde(default)]
    pub target_qdelay_ps: Option<u64>,
    /// The largest window (NSCC's maxwnd; RCCC's credit cap); None: 1.5 × the base BDP at the NIC's rate
    /// (`initNscc`).
    #[serde(default)]
    pub max_window_bytes: Option<u64>,
    /// ECN marking thresholds at switch egress when the scenario has no `[ecn]`; None: 0.2 and 0.8 of a BDP in
    /// whole packets (main_uec.cpp).
    #[serde(default)]
    pub ecn_low_bytes: Option<u64>,
    #[serde(default)]
    pub ecn_high_bytes: Option<u64>,
    /// RCCC: credit per pull (htsim: 4 MSS) and the pacer's share of the receiver's line rate (0.99).
    #[serde(default = "UecSpec::default_pull_packets")]
    pub pull_packets: u32,
    #[serde(default = "UecSpec::default_pull_rate")]
    pub pull_rate: f64,
}

impl Default for UecSpec {
    fn default() -> Self {
        UecSpec {
            cc: UecCc::Nscc,
            spray: UecSpray::Mixed,
            entropies: Self::default_entropies(),
            trimming: true,
            trim_bytes: 64,
            mtu_bytes: Self::default_mtu(),
            header_bytes: 64,
            ack_bytes: 64,
            ack_every_bytes: Self::default_ack_every(),
            ack_timer_ps: None,
            rto_ps: None,
            base_rtt_ps: None,
            target_qdelay_ps: None,
            max_window_bytes: None,
            ecn_low_bytes: None,
            ecn_high_bytes: None,
            pull_packets: Self::default_pull_packets(),
            pull_rate: Self::default_pull_rate(),
        }
    }
}

impl UecSpec {
    fn default_entropies() -> u32 {
        64
    }
    fn default_true() -> bool {
        true
    }
    fn default_64() -> u32 {
        64
    }
    fn default_mtu() -> u32 {
        4150
    }
    fn default_ack_every() -> u32 {
        16384
    }
    fn default_pull_packets() -> u32 {
        4
    }
    fn default_pull_rate() -> f64 {
        0.99
    }

    /// Payload bytes of a full packet (MSS).
    pub fn mss(&self) -> u32 {
        self.mtu_bytes - self.header_bytes
    }

    /// Check every knob; errors name the wire field.
    pub fn validate(&self) -> Result<()> {
        if self.entropies == 0 || !self.entropies.is_power_of_two() || self.entropies > 65536 {
            return Err(Error::spec("uec.entropies", format!("must be a power of two from 1 to 65536, not {}", self.entropies)));
        }
        if matches!(self.spray, UecSpray::Bitmap | UecSpray::Mixed) && self.entropies == 1 {
            return Err(Error::spec(
                "uec.entropies",
                "a bitmap or mixed balancer chooses among entropies, so it needs more than one (or use spray = \"ecmp\")",
            ));
        }
        if self.spray == UecSpray::Reps && self.entropies == 1 {
            return Err(Error::spec(
                "uec.entropies",
                "spray = \"reps\" recycles entropies, so it needs more than one (or use spray = \"ecmp\", one path per connection)",
            ));
        }
        if self.spray == UecSpray::Oblivious && self.entropies == 1 {
            return Err(Error::spec("uec.entropies", "spray = \"oblivious\" with one entropy sends every packet on one path: use spray = \"ecmp\""));
        }
        if !(64..=65535).contains(&self.mtu_bytes) {
            return Err(Error::spec("uec.mtu_bytes", format!("must be 64 B to 65,535 B, not {} B", self.mtu_bytes)));
        }
        if self.header_bytes == 0 || self.header_bytes >= self.mtu_bytes {
            return Err(Error::spec(
                "uec.header_bytes",
                format!("must be > 0 and below the MTU ({} B), not {} B", self.mtu_bytes, self.header_bytes),
            ));
        }
        if self.trim_bytes < self.header_bytes || self.trim_bytes > self.mtu_bytes {
            return Err(Error::spec(
                "uec.trim_bytes",
                format!(
                    "a trimmed packet keeps at least its {} B header and at most the MTU ({} B), not {} B",
                    self.header_bytes, self.mtu_bytes, self.trim_bytes
                ),
            ));
        }
        if self.ack_bytes == 0 || self.ack_bytes > 65535 {
            return Err(Error::spec("uec.ack_bytes", format!("must be 1 B to 65,535 B, not {} B", self.ack_bytes)));
        }
        if self.ack_every_bytes == 0 {
            return Err(Error::spec("uec.ack_every_bytes", "must be > 0"));
        }
        for (f, v) in [
            ("uec.ack_timer_ps", self.ack_timer_ps),
            ("uec.rto_ps", self.rto_ps),
            ("uec.base_rtt_ps", self.base_rtt_ps),
            ("uec.target_qdelay_ps", self.target_qdelay_ps),
        ] {
            if let Some(t) = v {
                if !(1_000..=1_000_000_000_000).contains(&t) {
                    return Err(Error::spec(f, format!("must be 1 ns to 1 s, not {}", duration(t))));
                }
            }
        }
        match (self.ecn_low_bytes, self.ecn_high_bytes) {
            (Some(lo), Some(hi)) if lo > hi => {
                return Err(Error::spec("uec.ecn_low_bytes", format!("{lo} B is above the high threshold {hi} B")));
            }
            (Some(0), _) | (_, Some(0)) => return Err(Error::spec("uec.ecn_low_bytes", "ECN thresholds must be > 0 B")),
            _ => {}
        }
        if let Some(w) = self.max_window_bytes {
            if w < self.mtu_bytes as u64 {
                return Err(Error::spec("uec.max_window_bytes", format!("must hold at least one MTU ({} B), not {w} B", self.mtu_bytes)));
            }
        }
        if self.pull_packets == 0 || self.pull_packets > 1024 {
            return Err(Error::spec("uec.pull_packets", format!("must be 1 to 1024 packets, not {}", self.pull_packets)));
        }
        if !(self.pull_rate > 0.0 && self.pull_rate <= 1.0) {
            return Err(Error::spec("uec.pull_rate", format!("{} is not a share of the line rate in (0, 1]", self.pull_rate)));
        }
        Ok(())
    }
}

/// A duration in ps as a person reads it: "2 s", "150 us", "750 ps".
fn duration(ps: u64) -> String {
    let units = [(1_000_000_000_000u64, "s"), (1_000_000_000, "ms"), (1_000_000, "us"), (1_000, "ns")];
    match units.iter().find(|(u, _)| ps >= *u) {
        Some(&(u, name)) => format!("{} {name}", (ps as f64 / u as f64 * 1000.0).round() / 1000.0),
        None => format!("{ps} ps"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_are_said_in_their_unit() {
        assert_eq!(super::duration(2_000_000_000_000), "2 s");
        assert_eq!(super::duration(150_500_000), "150.5 us");
        assert_eq!(super::duration(10), "10 ps");
    }
}
