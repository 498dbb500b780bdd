//! Measurement: per-flow FlowMonitor-like statistics, queue samples, and the end-of-run record with conservation.

use crate::events::Ev;
use crate::net::pfc::paused_total;
use crate::sim::Sim;
use fabricsim_core::control::Halt;
use fabricsim_core::record::{FlowColumns, PacketTotals, QueueColumns, RoceColumns, RunRecord, SampleColumns, WorkTimes};
use fabricsim_core::record_json::thousands;
use fabricsim_core::{Error, Result, Time};

/// FlowMonitor-like counters of one flow (times in ps).
#[derive(Clone, Copy, Default)]
pub(crate) struct FlowStat {
    pub(crate) tx_packets: u64,
    pub(crate) rx_packets: u64,
    pub(crate) lost: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) rx_bytes: u64,
    pub(crate) rx_payload: u64,
    pub(crate) first_tx: Option<u64>,
    pub(crate) last_tx: Option<u64>,
    pub(crate) first_rx: Option<u64>,
    pub(crate) last_rx: Option<u64>,
    pub(crate) delay_sum: u64,
    pub(crate) max_delay: u64,
}

/// What a run measures: FlowMonitor-like counters per flow, packet totals, packets by switch hops, queue samples
/// (their period and ports) and delivered payload per throughput bin. Everything here is history: nothing to shift.
pub(crate) struct Measure {
    pub(crate) stats: Vec<FlowStat>,
    pub(crate) totals: PacketTotals,
    pub(crate) hops: Vec<u64>,
    pub(crate) sample_every: Option<Time>,
    pub(crate) sample_ports: Vec<u32>,
    pub(crate) samples: SampleColumns,
    pub(crate) bin: Option<Time>,
    pub(crate) rx_bins: Vec<u64>,
    /// Most throughput bins and queue-sample rows this run may hold: the memory budget's share
    /// (`Compiled::limits`), the rows no more than `MAX_SAMPLE_ROWS`.
    pub(crate) max_bins: u64,
    pub(crate) max_sample_rows: u64,
    /// The budget those came from, in a refusal's words ("the memory budget of 8.0 GiB (--memory-limit)").
    pub(crate) budget_said: String,
    /// Whether an `Ev::Sample` is pending.
    pub(crate) sample_pending: bool,
}

/// Most queue-sample rows one run may record (about 1.6 GB of columns).
pub const MAX_SAMPLE_ROWS: usize = 50_000_000;

impl Sim {
    /// Room for throughput bin `k`: the bins grown to k + 1, or false (and the run's failure set, reported at
    /// the next check) when that passes the budget's `max_bins`.
    #[cold]
    pub(crate) fn grow_bins(&mut self, k: usize) -> bool {
        if k as u64 >= self.measure.max_bins {
            if self.failure.is_none() {
                let bins = self.measure.max_bins;
                self.failure = Some(Error::spec(
                    "measure.throughput_interval",
                    format!(
                        "the run passed t = {} s, more than {} throughput bins (about {}), what is left of {}: raise the interval or set a stop time",
                        self.now.as_secs_f64(),
                        thousands(bins),
                        fabricsim_core::budget::human(bins.saturating_mul(fabricsim_core::budget::BIN_BYTES)),
                        self.measure.budget_said
                    ),
                ));
            }
            return false;
        }
        self.measure.rx_bins.resize(k + 1, 0);
        true
    }

    /// Record every sampled port's queue depth now and schedule the next sample while events remain.
    pub(crate) fn sample(&mut self) {
        if (self.measure.samples.t_ps.len() + self.measure.sample_ports.len()) as u64 > self.measure.max_sample_rows {
            let rows = self.measure.max_sample_rows;
            let why = if rows < MAX_SAMPLE_ROWS as u64 {
                format!(
                    "{} rows (about {}), what is left of {}",
                    thousands(rows),
                    fabricsim_core::budget::human(rows.saturating_mul(fabricsim_core::budget::SAMPLE_BYTES)),
                    self.measure.budget_said
                )
            } else {
                format!("{} rows", thousands(rows))
            };
            self.failure = Some(Error::spec(
                "measure.queue_interval",
                format!(
                    "queue sampling would exceed {why} at t = {} s: raise the interval, sample fewer queues or set a stop time",
                    self.now.as_secs_f64()
                ),
            ));
            return;
        }
        self.sample_rows(self.now.0);
        // Sample while anything but the deadlock watchdog and the hybrid detector (which only observe) is pending.
        self.measure.sample_pending = false;
        if self.q.live() > self.observers_pending() {
            let dt = self.measure.sample_every.expect("sampling is configured");
            self.q.schedule(self.now + dt, Ev::Sample);
            self.measure.sample_pending = true;
        }
    }

    /// One queue-sample row per sampled port, stamped `t_ps`, with the queues as they stand now (a hybrid jump
    /// repeats them at the sample times it skips).
    pub(crate) fn sample_rows(&mut self, t_ps: u64) {
        for &p in &self.measure.sample_ports {
            let port = &mut self.net.ports[p as usize];
            port.settle_if_commits(self.now); // a sample is the last event of its picosecond
            let (vl, vb) = port.voq.as_ref().map_or((0, 0), |v| (v.len, v.bytes));
            self.measure.samples.t_ps.push(t_ps);
            self.measure.samples.port.push(p);
            self.measure.samples.packets.push(port.egress.len() + vl);
            self.measure.samples.bytes.push(port.egress.bytes() + vb);
        }
    }

    /// The run's record; checks conservation (sent = received + dropped + in flight, in total and per flow).
    pub(crate) fn finish(mut self, wall_s: f64, halted: Option<Halt>) -> Result<RunRecord> {
        let t = self.measure.totals;
        let in_flight = self.live;
        if t.tx != t.rx + t.dropped + in_flight {
            return Err(Error::Conservation(format!("sent {} != received {} + dropped {} + in flight {}", t.tx, t.rx, t.dropped, in_flight)));
        }
        let (ftx, frx, flost) = self.measure.stats.iter().fold((0, 0, 0), |a, s| (a.0 + s.tx_packets, a.1 + s.rx_packets, a.2 + s.lost));
        if ftx != t.tx || frx != t.rx || flost != t.dropped {
            return Err(Error::Conservation(format!(
                "per-flow sums (tx {ftx}, rx {frx}, lost {flost}) differ from totals (tx {}, rx {}, dropped {})",
                t.tx, t.rx, t.dropped
            )));
        }
        let mut flows = FlowColumns::with_capacity(self.flows.len());
        let n_src = self.udp.srcs.len();
        for (i, st) in self.measure.stats.iter().enumerate() {
            flows.name.push(self.flow_name[i]);
            flows.kind.push(self.flow_kind[i]);
            flows.src.push(self.flows[i].src);
            flows.dst.push(self.flows[i].dst);
            flows.tx_packets.push(st.tx_packets);
            flows.rx_packets.push(st.rx_packets);
            flows.lost_packets.push(st.lost);
            flows.tx_bytes.push(st.tx_bytes);
            flows.rx_bytes.push(st.rx_bytes);
            flows.rx_payload_bytes.push(st.rx_payload);
            flows.first_tx_ps.push(st.first_tx);
            flows.last_tx_ps.push(st.last_tx);
            flows.first_rx_ps.push(st.first_rx);
            flows.last_rx_ps.push(st.last_rx);
            flows.delay_sum_ps.push(st.delay_sum);
            flows.max_delay_ps.push(st.max_delay);
            let msg = i.checked_sub(n_src).and_then(|m| self.msg.msgs.get(m));
            let conn = i.checked_sub(n_src + self.msg.msgs.len()).and_then(|c| self.tcp.conns.get(c));
            let (complete, start) = match (msg, conn) {
                (Some(m), _) => (m.complete, m.started),
                (None, Some(c)) => (c.complete, c.started),
                _ => (None, None),
            };
            flows.complete_ps.push(complete.map(|t| t.0));
            flows.start_ps.push(start.map(|t| t.0));
        }
        let mut queues = QueueColumns::default();
        for (p, ps) in self.net.ports.iter().enumerate() {
            let tp = &self.net.topo.ports[p];
            queues.name.push(self.net.topo.port_name(p as u32));
            queues.node.push(tp.node);
            queues.port.push(tp.local);
            queues.tx_packets.push(ps.tx_packets);
            queues.tx_bytes.push(ps.tx_bytes);
            queues.drops.push(ps.drops);
            queues.peak_packets.push(ps.peak_packets);
            queues.peak_bytes.push(ps.peak_bytes);
            queues.rate_bps.push(tp.rate.0);
        }
        let work = WorkTimes {
            msgs: self.msg.msgs.iter().zip(&self.flows[n_src..]).map(|(m, f)| ((f.src, f.dst), m.started, m.complete)).collect(),
            comp_host: &self.comp_host,
            comp_start: &self.dag.comp_start,
            comp_end: &self.dag.comp_end,
        };
        let (completion_ps, compute, hosts) = work.summarize(self.net.topo.n_nodes(), self.now);
        let net_events = self.net_event_rows();
        let uec = self.uec_columns();
        let end = self.now;
        let roce = self.net.roce.then(|| {
            let rp = &self.net.roce_ports;
            let peak: Vec<u64> = rp.iter().map(|r| r.peak_ingress).collect();
            RoceColumns {
                pause_tx: rp.iter().map(|r| r.pause_tx).collect(),
                pause_rx: rp.iter().map(|r| r.pause_rx).collect(),
                paused_ps: rp.iter().map(|r| paused_total(r.paused, r.paused_since, r.paused_ps, end)).collect(),
                ecn_marks: rp.iter().map(|r| r.ecn_marks).collect(),
                peak_ingress_bytes: peak,
                cnps: self.rdma.cnps,
                rate_t_ps: std::mem::take(&mut self.rdma.rates.t_ps),
                rate_flow: std::mem::take(&mut self.rdma.rates.flow),
                rate_bps: std::mem::take(&mut self.rdma.rates.rate_bps),
                pfc_t_ps: std::mem::take(&mut self.pfc.log.0),
                pfc_port: std::mem::take(&mut self.pfc.log.1),
                pfc_pause: std::mem::take(&mut self.pfc.log.2),
            }
        });
        Ok(RunRecord {
            fidelity: "packet".into(),
            seed: self.seed,
            end_ps: self.now.0,
            completion_ps,
            events: self.events,
            packets: PacketTotals { in_flight, ..t },
            hops: self.measure.hops,
            flows,
            queues,
            samples: self.measure.samples,
            compute,
            hosts,
            node_names: self.net.topo.names,
            flow_names: self.flow_names,
            wall_s,
            halted,
            reached_stop: false,
            rx_bins: self.measure.rx_bins,
            bin_ps: self.measure.bin.map(|b| b.0),
            roce,
            deadlock: self.pfc.deadlock,
            fast_forward: None,
            retransmit: self.msg.stats,
            uec,
            net_events,
        })
    }
}
