//! The RoCEv2 wire spec: the `[pfc]` shared-buffer switch, `[ecn]` marking and the `[rdma]` transport, with
//! their validation.
//!
//! Defaults are HPCC's ns-3 fork (`mix/config.txt`, `run.py`, `rdma-hw.cc`, `switch-mmu.cc`); Python resolves
//! presets and units, so every value here is explicit (bytes, ps, bits per second). See docs/roce.md.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Priority-based flow control of the shared-buffer switches (`SwitchModel::SharedBuffer`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PfcSpec {
    /// Whether switches send PAUSE frames; without PFC a shared-buffer switch drops when its headroom is full.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Shared buffer of each switch, in bytes.
    pub buffer_bytes: u64,
    /// Reserved bytes per ingress port (data priority), outside the shared pool.
    pub reserve_bytes: u64,
    /// Dynamic threshold factor: a port may use α × (the shared buffer left) before it pauses. Doubled per
    /// doubling of a port's rate above the hosts' NIC rate, up to 1 (HPCC's `pfc_a_shift`).
    pub alpha: f64,
    /// Headroom per ingress port, in bytes; `None` is HPCC's 3 × rate × link delay / 8.
    #[serde(default)]
    pub headroom_bytes: Option<u64>,
    /// A paused port resumes when its shared use is this much below the threshold (or zero).
    pub resume_offset_bytes: u64,
    /// Wire bytes of a PAUSE or RESUME frame (it waits for the packet on the wire, then serialises).
    #[serde(default = "pause_frame")]
    pub frame_bytes: u32,
    /// Period of the deadlock watchdog: a run with paused ports that sends nothing for this long is checked
    /// for a cycle of paused ports.
    #[serde(default = "watchdog")]
    pub watchdog_ps: u64,
}

fn yes() -> bool {
    true
}
fn pause_frame() -> u32 {
    64
}
fn watchdog() -> u64 {
    1_000_000_000
}
fn one() -> f64 {
    1.0
}

/// ECN marking (RED-like on the instantaneous queue) at switch egress ports.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EcnSpec {
    /// Thresholds by link rate; a port takes the entry of its rate, else the nearest rate below, else the lowest.
    pub thresholds: Vec<EcnThreshold>,
}

/// Mark with probability 0 below `kmin_bytes`, rising linearly to `pmax` at `kmax_bytes`, and 1 above.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EcnThreshold {
    pub rate_bps: u64,
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
}

impl EcnSpec {
    /// The thresholds a port of `rate_bps` uses. O(entries).
    pub fn for_rate(&self, rate_bps: u64) -> EcnThreshold {
        let below = self.thresholds.iter().filter(|t| t.rate_bps <= rate_bps).max_by_key(|t| t.rate_bps);
        *below.or_else(|| self.thresholds.iter().min_by_key(|t| t.rate_bps)).expect("validated: at least one threshold")
    }
}

/// Congestion control of the RDMA transport.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RdmaCc {
    /// Line rate, paced; only PFC (or loss and go-back-N) limits it.
    None,
    /// DCQCN as in HPCC's ns-3 fork (Mellanox model: timer-driven α, rate decrease, fast recovery, AI, HAI).
    Dcqcn,
    /// HPCC: INT per hop and the rate/window rule with η and maxStage.
    Hpcc,
}

/// The RDMA transport: every message is one queue pair (QP) with ACKs, go-back-N and congestion control.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RdmaSpec {
    pub cc: RdmaCc,
    /// Wire bytes of an ACK or NACK (HPCC: a 60 B frame plus its 2 B PPP header).
    pub ack_bytes: u32,
    /// ACKs and NACKs travel in the control class (strict priority, never paused); else with the data.
    pub ack_high_priority: bool,
    /// A receiver sends at most one NACK per hole in this interval.
    pub nack_interval_ps: u64,
    /// In-flight limit of one bandwidth-delay product (HPCC's HAS_WIN), and whether it follows the rate (VAR_WIN).
    pub window: bool,
    pub var_window: bool,
    /// Base RTT T (ps); `None` is the largest over the scenario's QPs of 2 × propagation + payload serialisation.
    #[serde(default)]
    pub base_rtt_ps: Option<u64>,
    pub min_rate_bps: u64,
    /// DCQCN: EWMA gain g, the α update period, the rate-decrease check period, the rate-increase timer, the
    /// fast-recovery stages F, additive and hyper increase steps, and whether a cut always clamps the target.
    pub g: f64,
    pub alpha_resume_interval_ps: u64,
    pub rate_decrease_interval_ps: u64,
    pub rp_timer_ps: u64,
    pub fast_recovery_times: u32,
    pub rate_ai_bps: u64,
    pub rate_hai_bps: u64,
    pub clamp_target_rate: bool,
    /// DCQCN: the first CNP of a QP cuts its rate to this fraction (HPCC fork's `RateOnFirstCnp`; 1 keeps it).
    #[serde(default = "one")]
    pub rate_on_first_cnp: f64,
    /// HPCC: target utilisation η, maxStage, the additive step (as a rate) and per-ACK fast reaction.
    pub eta: f64,
    pub max_stage: u32,
    pub hpcc_rate_ai_bps: u64,
    pub fast_react: bool,
}

impl PfcSpec {
    pub fn validate(&self) -> Result<()> {
        if self.buffer_bytes == 0 {
            return Err(Error::spec("pfc.buffer_bytes", "must be > 0"));
        }
        if !(self.alpha > 0.0 && self.alpha <= 64.0) {
            return Err(Error::spec("pfc.alpha", format!("{} is not a dynamic-threshold factor in (0, 64]", self.alpha)));
        }
        if self.frame_bytes == 0 {
            return Err(Error::spec("pfc.frame_bytes", "must be > 0"));
        }
        if self.watchdog_ps == 0 {
            return Err(Error::spec("pfc.watchdog_ps", "must be > 0"));
        }
        Ok(())
    }
}

impl EcnSpec {
    pub fn validate(&self) -> Result<()> {
        if self.thresholds.is_empty() {
            return Err(Error::spec("ecn.thresholds", "needs at least one entry"));
        }
        for (i, t) in self.thresholds.iter().enumerate() {
            let f = |x: &str| format!("ecn.thresholds[{i}].{x}");
            if t.kmin_bytes > t.kmax_bytes {
                return Err(Error::spec(f("kmin_bytes"), format!("Kmin {} B is above Kmax {} B", t.kmin_bytes, t.kmax_bytes)));
            }
            if !(0.0..=1.0).contains(&t.pmax) {
                return Err(Error::spec(f("pmax"), format!("{} is not a probability in [0, 1]", t.pmax)));
            }
        }
        Ok(())
    }
}

impl RdmaSpec {
    pub fn validate(&self) -> Result<()> {
        let e = |k: &str, why: String| Err(Error::spec(format!("rdma.{k}"), why));
        if self.ack_bytes == 0 || self.ack_bytes > u16::MAX as u32 {
            return e("ack_bytes", format!("{} B is not an ACK size in 1..=65535", self.ack_bytes));
        }
        if !(self.g > 0.0 && self.g <= 1.0) {
            return e("g", format!("{} is not an EWMA gain in (0, 1]", self.g));
        }
        if !(self.rate_on_first_cnp > 0.0 && self.rate_on_first_cnp <= 1.0) {
            return e("rate_on_first_cnp", format!("{} is not a fraction of the rate in (0, 1]", self.rate_on_first_cnp));
        }
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return e("eta", format!("{} is not a target utilisation in (0, 1]", self.eta));
        }
        for (k, v) in [
            ("alpha_resume_interval_ps", self.alpha_resume_interval_ps),
            ("rate_decrease_interval_ps", self.rate_decrease_interval_ps),
            ("rp_timer_ps", self.rp_timer_ps),
            ("min_rate_bps", self.min_rate_bps),
        ] {
            if v == 0 {
                return e(k, "must be > 0".into());
            }
        }
        if self.base_rtt_ps == Some(0) {
            return e("base_rtt_ps", "must be > 0".into());
        }
        Ok(())
    }
}

/// Named parameter sets (docs/roce_parameters.md gives the source of every value). Rates bits/s, times ps.
pub const PRESETS: [&str; 3] = ["hpcc", "simai", "dcqcn_paper"];

const US: u64 = 1_000_000;
const MBPS: u64 = 1_000_000;

impl PfcSpec {
    /// HPCC's switch: 32 MiB shared buffer (config.txt BUFFER_SIZE 32), 4 KiB reserve and 3 KiB resume offset
    /// (switch-mmu.cc), α = 1/8 (pfc_a_shift 3), headroom 3 × rate × delay / 8 (third.cc).
    pub fn hpcc() -> PfcSpec {
        PfcSpec {
            enabled: true,
            buffer_bytes: 32 << 20,
            reserve_bytes: 4096,
            alpha: 0.125,
            headroom_bytes: None,
            resume_offset_bytes: 3072,
            frame_bytes: pause_frame(),
            watchdog_ps: watchdog(),
        }
    }
}

impl EcnSpec {
    /// ECN thresholds of a preset: HPCC config.txt's KMIN/KMAX/PMAX maps (KB = 1000 B) plus run.py's 400G row, SimAI.conf's (adds
    /// 200G, 400G, 1.6T), or the DCQCN paper's 5 KB / 200 KB / 1%.
    pub fn preset(name: &str) -> Option<EcnSpec> {
        let t = |g: u64, kmin_kb: u64, kmax_kb: u64, pmax: f64| EcnThreshold {
            rate_bps: g * 1_000_000_000,
            kmin_bytes: kmin_kb * 1000,
            kmax_bytes: kmax_kb * 1000,
            pmax,
        };
        let thresholds = match name {
            // 25/50/100G: mix/config.txt:52-54. 400G: HPCC's run.py:96-98 writes a second row at 4 × bw
            // (bw = 100 by default): Kmin 100·4bw/25 = 1600 KB, Kmax 400·4bw/25 = 6400 KB, Pmax 0.2.
            "hpcc" => vec![t(25, 100, 400, 0.2), t(50, 200, 800, 0.2), t(100, 400, 1600, 0.2), t(400, 1600, 6400, 0.2)],
            "simai" => vec![
                t(25, 100, 400, 0.2),
                t(50, 200, 800, 0.2),
                t(100, 400, 1600, 0.2),
                t(200, 300, 1200, 0.8),
                t(400, 800, 3200, 0.2),
                t(1600, 600, 2400, 0.2),
            ],
            "dcqcn_paper" => vec![t(40, 5, 200, 0.01)],
            _ => return None,
        };
        Some(EcnSpec { thresholds })
    }
}

impl RdmaSpec {
    /// The parameters of a preset for congestion control `cc`. "hpcc" is HPCC's mix/config.txt (the window
    /// per cc as its run.py: on for HPCC, off for DCQCN and none); "simai" is SimAI.conf (its DCQCN block equals
    /// config.txt); "dcqcn_paper" takes the DCQCN paper's reaction-point values (Zhu et al. 2015: g = 1/256,
    /// 55 µs timers, F = 5, R_AI 40 Mb/s, clamped target) with HPCC's implementation of the rest.
    pub fn preset(name: &str, cc: RdmaCc) -> Option<RdmaSpec> {
        let hpcc = cc == RdmaCc::Hpcc;
        let base = RdmaSpec {
            cc,
            ack_bytes: if hpcc { 88 } else { 60 },
            ack_high_priority: true,
            nack_interval_ps: 500 * US,
            window: hpcc,
            var_window: true,
            base_rtt_ps: None,
            min_rate_bps: 100 * MBPS,
            g: 1.0 / 256.0,
            alpha_resume_interval_ps: US,
            rate_decrease_interval_ps: 4 * US,
            rp_timer_ps: 900 * US,
            fast_recovery_times: 1,
            rate_ai_bps: 50 * MBPS,
            rate_hai_bps: 100 * MBPS,
            clamp_target_rate: false,
            rate_on_first_cnp: 1.0,
            eta: 0.95,
            max_stage: 0,
            hpcc_rate_ai_bps: 50 * MBPS,
            fast_react: true,
        };
        match name {
            "hpcc" | "simai" => Some(base),
            "dcqcn_paper" => Some(RdmaSpec {
                alpha_resume_interval_ps: 55 * US,
                rate_decrease_interval_ps: 50 * US,
                rp_timer_ps: 55 * US,
                fast_recovery_times: 5,
                rate_ai_bps: 40 * MBPS,
                rate_hai_bps: 200 * MBPS,
                clamp_target_rate: true,
                ..base
            }),
            _ => None,
        }
    }
}
