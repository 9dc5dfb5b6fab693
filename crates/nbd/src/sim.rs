//! The simulator thread: one thread owns the [`Ssd`] and serves the NBD server's worker threads
//! through a channel ([`Server::client`]). Each command is submitted to the SSD's open-loop
//! host interface ([`Ssd::submit`]) at its arrival time; its reply goes back when it completes.
//!
//! Two clocks ([`Pace`]):
//! - `real-time`: simulated time follows the wall clock since the server started. A command
//!   arrives at the current wall time; the thread simulates up to the wall clock and sleeps
//!   until the next simulated event is due (or a command arrives), so a reply is released when
//!   the wall clock reaches its simulated completion time. When simulating takes longer than
//!   the time it simulates, replies go late: the lateness of every reply is measured, and
//!   the thread warns on stderr (at most once a second) when replies are more than
//!   [`LATE_WARN`] late.
//! - `none`: simulated time runs free; a command arrives at the current simulated time and its
//!   reply goes as soon as it is simulated. The device side is the same; the client's own
//!   latencies mean nothing.

use nandlab_core::SimTime;
use nandlab_ftl::{HostCompletion, HostOp, HostRequest, Ssd};
use nandlab_lab::LabResult;
use nandlab_lab::ssd::SsdRun;
use nandlab_lab::stack::{Stack, StackOutcome, StackRun, ssd_metrics};
use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Replies later than this after their simulated completion are warned about (real-time).
pub const LATE_WARN: Duration = Duration::from_millis(1);

/// How simulated time relates to the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Replies are released at their simulated completion time on the wall clock.
    RealTime,
    /// Replies go as soon as simulated.
    None,
}

impl std::str::FromStr for Pace {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "real-time" => Ok(Pace::RealTime),
            "none" => Ok(Pace::None),
            other => Err(format!("pace: `{other}` is not a pace (real-time or none)")),
        }
    }
}

impl Pace {
    pub fn name(self) -> &'static str {
        match self {
            Pace::RealTime => "real-time",
            Pace::None => "none",
        }
    }
}

/// The device a server exports: the stack it was built from (for the report files) and the
/// SSD, in full payload mode, with the stack's `[precondition]` applied.
#[derive(Debug)]
pub struct Device {
    pub stack: Stack,
    pub ssd: Ssd,
}

/// The workload of a stack made from a preset or device file: never run (the NBD client is
/// the workload), but a stack needs one.
const NO_WORKLOAD: &str = "kind = \"synthetic\"\npattern = \"random\"\nread_fraction = 0.0\n\
                           request_size_bytes = 4096\nspan_bytes = 0\nrequest_count = 1\n";

impl Device {
    /// The device `name` names: an SSD preset, a device file (`[nand]` and `[ssd]`) or a
    /// stack config (its `[workload]` is not run). Payloads are kept whatever the file says.
    pub fn build(name: &str) -> LabResult<Device> {
        use nandlab_lab::stack::{WorkloadSection, device_stack, ssd_preset_names};
        let is_stack = !ssd_preset_names().contains(&name)
            && std::fs::read_to_string(name)
                .ok()
                .and_then(|text| text.parse::<toml::Table>().ok())
                .is_some_and(|t| t.contains_key("workload"));
        let stack = if is_stack {
            Stack::load(Path::new(name))?
        } else {
            let workload: WorkloadSection =
                toml::from_str(NO_WORKLOAD).expect("the placeholder workload parses");
            device_stack(Some(name), &workload, 0)?
        };
        let mut config = stack.ssd_config();
        config.ftl.payload = nandlab_ftl::PayloadMode::Full;
        let mut ssd = stack.new_ssd(config, stack.config.run.seed)?;
        if let Some(p) = &stack.config.precondition {
            ssd.precondition(p)?;
        }
        // no power trace will scan this device: stale pages free their bytes at once (an
        // overwritten or trimmed page costs no memory)
        ssd.set_release_stale_payloads(true)?;
        Ok(Device { stack, ssd })
    }
}

/// A command from a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// NBD write-zeroes: a write of zeros.
    Zero,
    Trim,
    Flush,
}

type Reply = Result<Vec<u8>, String>;

enum Msg {
    Io {
        op: Op,
        offset: u64,
        len: u64,
        fua: bool,
        data: Option<Vec<u8>>,
        reply: SyncSender<Reply>,
    },
    Shutdown(Sender<Result<Summary, String>>),
}

/// A handle the NBD worker threads use (cheap to clone, one per connection).
#[derive(Clone, Debug)]
pub struct Client {
    tx: Sender<Msg>,
}

impl Client {
    fn call(&self, op: Op, offset: u64, len: u64, fua: bool, data: Option<Vec<u8>>) -> Reply {
        let (reply, rx) = mpsc::sync_channel(1);
        self.tx
            .send(Msg::Io {
                op,
                offset,
                len,
                fua,
                data,
                reply,
            })
            .map_err(|_| "the simulator has stopped".to_string())?;
        rx.recv()
            .map_err(|_| "the simulator has stopped".to_string())?
    }

    /// Reads `buf.len()` bytes at `offset`.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        let data = self.call(Op::Read, offset, buf.len() as u64, false, None)?;
        buf.copy_from_slice(&data);
        Ok(())
    }
    pub fn write(&self, offset: u64, data: &[u8], fua: bool) -> Result<(), String> {
        let len = data.len() as u64;
        self.call(Op::Write, offset, len, fua, Some(data.to_vec()))
            .map(drop)
    }
    pub fn zero(&self, offset: u64, len: u64, fua: bool) -> Result<(), String> {
        self.call(Op::Zero, offset, len, fua, None).map(drop)
    }
    pub fn trim(&self, offset: u64, len: u64, fua: bool) -> Result<(), String> {
        self.call(Op::Trim, offset, len, fua, None).map(drop)
    }
    pub fn flush(&self) -> Result<(), String> {
        self.call(Op::Flush, 0, 0, false, None).map(drop)
    }
}

/// What a server did: counts, the pacing's accuracy, and the device's report.
#[derive(Clone, Debug)]
pub struct Summary {
    pub pace: Pace,
    /// Commands by NBD op: read, write, zero, trim, flush.
    pub commands: [u64; 5],
    /// Commands refused (out of range, bad arguments), answered with an error.
    pub refused: u64,
    pub wall_s: f64,
    pub sim_s: f64,
    /// Real-time: how late replies were released after their simulated completion, in µs
    /// (sorted; empty with `--pace none`).
    pub lateness_us: Vec<f32>,
    /// Replies later than [`LATE_WARN`].
    pub late_replies: u64,
    /// Bytes the device's payload store allocated for page bytes (stored as first written).
    pub payload_allocated_bytes: u64,
    pub run: StackRun,
}

impl Summary {
    /// Lateness percentile `q` (0..=1) in µs (0 without replies).
    pub fn lateness_percentile_us(&self, q: f64) -> f64 {
        if self.lateness_us.is_empty() {
            return 0.0;
        }
        let i = ((self.lateness_us.len() - 1) as f64 * q).round() as usize;
        f64::from(self.lateness_us[i])
    }

    /// `serve.json`: the server's own numbers (the device's are in report.json).
    pub fn to_json(&self) -> serde_json::Value {
        let [read, write, zero, trim, flush] = self.commands;
        serde_json::json!({
            "pace": self.pace.name(),
            "commands": {"read": read, "write": write, "write_zeroes": zero, "trim": trim,
                         "flush": flush, "refused": self.refused},
            "wall_s": self.wall_s,
            "sim_s": self.sim_s,
            "reply_lateness_us": {
                "p50": self.lateness_percentile_us(0.5),
                "p99": self.lateness_percentile_us(0.99),
                "max": self.lateness_percentile_us(1.0),
                "over_1ms": self.late_replies,
            },
            "payload_allocated_bytes": self.payload_allocated_bytes,
        })
    }

    /// Writes the files of `nandlab run --out` (report.json, metrics.json, config.json, CSVs)
    /// and serve.json into `dir`.
    pub fn write(&self, stack: &Stack, dir: &Path) -> LabResult<()> {
        std::fs::create_dir_all(dir)
            .map_err(|e| nandlab_lab::LabError::Usage(format!("--out {}: {e}", dir.display())))?;
        nandlab_lab::ssd::write_stack_results(stack, &self.run, dir)?;
        nandlab_lab::output::write_file(
            &dir.join("serve.json"),
            &(serde_json::to_string_pretty(&self.to_json()).expect("json") + "\n"),
        )
    }
}

/// A running simulator thread.
#[derive(Debug)]
pub struct Server {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
    pub capacity_bytes: u64,
}

impl Server {
    /// Starts the simulator thread on `ssd`.
    pub fn start(mut ssd: Ssd, pace: Pace) -> Server {
        let capacity_bytes = ssd.logical_capacity_bytes();
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("nandlab-sim".into())
            .spawn(move || Loop::new(&mut ssd, pace).run(rx))
            .expect("spawn the simulator thread");
        Server {
            tx,
            thread: Some(thread),
            capacity_bytes,
        }
    }

    pub fn client(&self) -> Client {
        Client {
            tx: self.tx.clone(),
        }
    }

    /// Finishes the commands in flight, stops the thread and returns what it did.
    pub fn shutdown(mut self) -> Result<Summary, String> {
        let (tx, rx) = mpsc::channel();
        let sent = self.tx.send(Msg::Shutdown(tx));
        let summary = match sent {
            Ok(()) => rx
                .recv()
                .map_err(|_| "the simulator thread died".to_string())?,
            Err(_) => Err("the simulator thread died".to_string()),
        };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        summary
    }
}

struct Pending {
    reply: SyncSender<Reply>,
}

struct Loop<'a> {
    ssd: &'a mut Ssd,
    pace: Pace,
    /// The pace asked for (a shutdown switches real-time to none to finish).
    started: Pace,
    start: Instant,
    base: SimTime,
    pending: HashMap<u64, Pending>,
    done: Vec<HostCompletion>,
    commands: [u64; 5],
    refused: u64,
    lateness_us: Vec<f32>,
    late_replies: u64,
    /// Late replies since the last warning, the worst of them, and when it was.
    late_since_warning: (u64, f64),
    last_warning: Option<Instant>,
    zeros: Vec<u8>,
}

impl<'a> Loop<'a> {
    fn new(ssd: &'a mut Ssd, pace: Pace) -> Self {
        ssd.open_loop_begin();
        let base = ssd.now();
        Loop {
            ssd,
            pace,
            started: pace,
            start: Instant::now(),
            base,
            pending: HashMap::new(),
            done: Vec::new(),
            commands: [0; 5],
            refused: 0,
            lateness_us: Vec::new(),
            late_replies: 0,
            late_since_warning: (0, 0.0),
            last_warning: None,
            zeros: Vec::new(),
        }
    }

    /// The wall clock as simulated time.
    fn wall(&self) -> SimTime {
        self.base + SimTime::from_ns(self.start.elapsed().as_nanos() as u64)
    }

    fn run(mut self, rx: Receiver<Msg>) {
        let mut stop: Option<Sender<Result<Summary, String>>> = None;
        loop {
            // wait: for a command, or (real-time) until the next simulated event is due
            let first = if stop.is_some() {
                None
            } else if self.pending.is_empty() {
                match rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return,
                }
            } else {
                match self.pace {
                    Pace::None => match rx.try_recv() {
                        Ok(m) => Some(m),
                        Err(TryRecvError::Empty) => None,
                        Err(TryRecvError::Disconnected) => return,
                    },
                    Pace::RealTime => {
                        let wait = self
                            .ssd
                            .next_event_time()
                            .map_or(Duration::from_millis(100), |t| {
                                Duration::from_nanos(t.saturating_sub(self.wall()).as_ps() / 1000)
                            });
                        match rx.recv_timeout(wait) {
                            Ok(m) => Some(m),
                            Err(RecvTimeoutError::Timeout) => None,
                            Err(RecvTimeoutError::Disconnected) => return,
                        }
                    }
                }
            };
            let mut next = first;
            while let Some(msg) = next {
                match msg {
                    Msg::Io {
                        op,
                        offset,
                        len,
                        fua,
                        data,
                        reply,
                    } => self.submit(op, offset, len, fua, data, reply),
                    Msg::Shutdown(tx) => stop = Some(tx),
                }
                next = rx.try_recv().ok();
            }
            let advanced = match self.pace {
                Pace::RealTime => {
                    let wall = self.wall().max(self.ssd.now());
                    self.ssd.advance_to(wall).map(drop)
                }
                Pace::None if !self.pending.is_empty() => {
                    self.ssd.advance_to_completion().map(drop)
                }
                Pace::None => Ok(()),
            };
            if let Err(e) = advanced {
                // the simulator cannot go on: every command in flight fails
                eprintln!("nandlab serve: simulator error: {e}");
                for (_, p) in self.pending.drain() {
                    let _ = p.reply.send(Err(format!("simulator error: {e}")));
                }
                if let Some(tx) = stop {
                    let _ = tx.send(Err(e.to_string()));
                }
                return;
            }
            self.reply();
            if let Some(tx) = &stop
                && self.pending.is_empty()
            {
                let _ = tx.send(Ok(self.summary()));
                return;
            }
            if stop.is_some() && self.pace == Pace::RealTime {
                // finish what is in flight without waiting for the wall clock
                self.pace = Pace::None;
            }
        }
    }

    fn submit(
        &mut self,
        op: Op,
        offset: u64,
        len: u64,
        fua: bool,
        data: Option<Vec<u8>>,
        reply: SyncSender<Reply>,
    ) {
        self.commands[op as usize] += 1;
        let arrival = match self.pace {
            Pace::RealTime => self.wall().max(self.ssd.now()),
            Pace::None => self.ssd.now(),
        };
        let host_op = match op {
            Op::Read => HostOp::Read,
            Op::Write | Op::Zero => HostOp::Write,
            Op::Trim => HostOp::Trim,
            Op::Flush => HostOp::Flush,
        };
        let mut request = HostRequest::new(host_op, offset, len);
        request.arrival = Some(arrival);
        request.fua = fua && host_op == HostOp::Write;
        if op == Op::Zero && self.zeros.len() < len as usize {
            self.zeros.resize(len as usize, 0);
        }
        let bytes = match op {
            Op::Write => data.as_deref(),
            Op::Zero => Some(&self.zeros[..len as usize]),
            _ => None,
        };
        match self.ssd.submit(&request, bytes) {
            Ok(tag) => {
                self.pending.insert(tag, Pending { reply });
            }
            Err(e) => {
                self.refused += 1;
                let _ = reply.send(Err(e.to_string()));
            }
        }
    }

    /// Sends the replies of the commands completed.
    fn reply(&mut self) {
        self.ssd.take_completions_into(&mut self.done);
        if self.done.is_empty() {
            return;
        }
        let wall = self.wall();
        for c in self.done.drain(..) {
            let Some(p) = self.pending.remove(&c.tag) else {
                continue;
            };
            if self.pace == Pace::RealTime {
                let late_us = wall.saturating_sub(c.completed).as_us_f64();
                self.lateness_us.push(late_us as f32);
                if late_us > LATE_WARN.as_secs_f64() * 1e6 {
                    self.late_replies += 1;
                    self.late_since_warning.0 += 1;
                    self.late_since_warning.1 = self.late_since_warning.1.max(late_us);
                }
            }
            // the client may have gone (disconnected mid-request): nothing to do then
            let _ = p.reply.send(c.status.map(|()| c.data));
        }
        self.warn_if_behind();
    }

    fn warn_if_behind(&mut self) {
        let (n, worst) = self.late_since_warning;
        if n == 0
            || self
                .last_warning
                .is_some_and(|t| t.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        eprintln!(
            "nandlab serve: WARNING: the simulator is behind the wall clock: {n} replies released more than {} ms after their simulated completion, the latest {:.3} ms late (simulated latencies stay right; the client's are longer)",
            LATE_WARN.as_millis(),
            worst / 1000.0
        );
        self.late_since_warning = (0, 0.0);
        self.last_warning = Some(Instant::now());
    }

    fn summary(&mut self) -> Summary {
        let mut lateness = std::mem::take(&mut self.lateness_us);
        lateness.sort_unstable_by(f32::total_cmp);
        let report = self.ssd.report();
        let metrics = ssd_metrics(&report, 0);
        Summary {
            pace: self.started,
            commands: self.commands,
            refused: self.refused,
            wall_s: self.start.elapsed().as_secs_f64(),
            sim_s: (self.ssd.now() - self.base).as_s_f64(),
            lateness_us: lateness,
            late_replies: self.late_replies,
            payload_allocated_bytes: self.ssd.payload_allocated_bytes(),
            run: StackRun {
                outcome: StackOutcome::Ssd {
                    run: Box::new(SsdRun {
                        report,
                        interrupted: false,
                        nvme: None,
                    }),
                    folded_requests: 0,
                    read_preconditioned_pages: 0,
                    fitted_blocks_per_plane: None,
                    pcm: None,
                },
                metrics,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small full-payload device (a device file's text).
    fn small() -> Device {
        let dir = std::env::temp_dir().join(format!("nandlab-nbd-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("device.toml");
        std::fs::write(
            &path,
            "[nand]\npreset = \"mlc1\"\n[nand.geometry]\nblocks_per_plane = 256\n[ssd.host]\nqueue_depth = 8\n",
        )
        .unwrap();
        Device::build(path.to_str().unwrap()).unwrap()
    }

    #[test]
    fn presets_device_files_and_bad_names() {
        assert!(Device::build("bench-ssd").is_ok());
        let e = Device::build("no-such-device").unwrap_err().to_string();
        assert!(e.contains("no-such-device"), "{e}");
    }

    #[test]
    fn clients_read_what_they_wrote_from_several_threads() {
        for pace in [Pace::None, Pace::RealTime] {
            let device = small();
            let page = u64::from(device.ssd.page_size_bytes());
            let server = Server::start(device.ssd, pace);
            let threads: Vec<_> = (0..4u64)
                .map(|t| {
                    let c = server.client();
                    std::thread::spawn(move || {
                        for i in 0..20u64 {
                            let offset = (t * 100 + i) * page + 7;
                            let data: Vec<u8> =
                                (0..page + 100).map(|b| (b * 7 + t + i) as u8).collect();
                            c.write(offset, &data, i % 5 == 0).unwrap();
                            let mut back = vec![0u8; data.len()];
                            c.read(offset, &mut back).unwrap();
                            assert_eq!(back, data);
                        }
                        c.zero(t * 100 * page, page, false).unwrap();
                        let mut back = vec![1u8; page as usize];
                        c.read(t * 100 * page, &mut back).unwrap();
                        assert!(back.iter().all(|&b| b == 0));
                        c.trim((t * 100 + 50) * page, 4 * page, false).unwrap();
                        c.flush().unwrap();
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            let c = server.client();
            let capacity = server.capacity_bytes;
            let e = c.read(capacity - 10, &mut [0u8; 100]).unwrap_err();
            assert!(e.contains("capacity"), "{e}");
            let s = server.shutdown().unwrap();
            // the refused read counts as a command
            assert_eq!(s.commands, [80 + 4 + 1, 80, 4, 4, 4]);
            assert_eq!(s.refused, 1);
            let report = match &s.run.outcome {
                StackOutcome::Ssd { run, .. } => &run.report,
                _ => unreachable!(),
            };
            // every command the device accepted is in its report (zeroes are writes)
            assert_eq!(report.read.requests, 84);
            assert_eq!(report.write.requests, 84);
            assert_eq!(report.trim.requests, 4);
            if pace == Pace::RealTime {
                assert_eq!(s.lateness_us.len(), 84 + 84 + 4 + 4);
                // simulated time followed the wall clock
                assert!(s.sim_s <= s.wall_s + 1e-3, "{} > {}", s.sim_s, s.wall_s);
            } else {
                assert!(s.lateness_us.is_empty());
            }
        }
    }

    /// Real-time pacing: a client's wall-clock latency is the simulated latency plus little.
    #[test]
    fn real_time_replies_follow_the_simulated_latency() {
        let device = small();
        let page = u64::from(device.ssd.page_size_bytes());
        let server = Server::start(device.ssd, Pace::RealTime);
        let c = server.client();
        let mut wall = Vec::new();
        for i in 0..50u64 {
            let data = vec![i as u8; page as usize];
            let t = Instant::now();
            c.write(i * page, &data, true).unwrap();
            wall.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let s = server.shutdown().unwrap();
        let report = match &s.run.outcome {
            StackOutcome::Ssd { run, .. } => run.report.clone(),
            _ => unreachable!(),
        };
        wall.sort_by(f64::total_cmp);
        let sim_p50 = report.write.lat.p50_us;
        let wall_p50 = wall[wall.len() / 2];
        // a FUA program on mlc1 takes hundreds of microseconds; the wall clock follows it
        assert!(sim_p50 > 100.0, "{sim_p50}");
        assert!(
            wall_p50 >= sim_p50 * 0.95,
            "wall {wall_p50} us < simulated {sim_p50} us"
        );
        assert!(
            wall_p50 < sim_p50 + 5000.0,
            "wall {wall_p50} us vs simulated {sim_p50} us"
        );
    }
}
