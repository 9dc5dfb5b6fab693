//! The PCM device (SPEC P1): byte-addressable cells in banks, read latency per line, write
//! latency per modified 8-byte word, data-comparison write with optional Flip-N-Write, per-word
//! write counters against a per-word endurance, energy per bit read and per bit programmed.
//!
//! Two ways to use it, on the same state:
//! - **synchronous** ([`PcmDevice::read`], [`PcmDevice::write`], [`PcmDevice::charge_read`]):
//!   the access happens now and its [`AccessCost`] is returned (latency on an idle device);
//!   banks are not occupied. For components that only need costs.
//! - **event-driven** ([`PcmDevice::submit_read`], [`PcmDevice::submit_write`], and the
//!   [`nandlab_core::EventSource`] impl in `source.rs`): the access's data effect happens at
//!   submission, then it occupies each bank it touches for that bank's share of the work, after
//!   earlier requests on that bank (first come, first served); it completes when its last bank
//!   is done.
//! - **timed synchronous** ([`PcmDevice::begin_call`] … [`PcmDevice::end_call`], `timed.rs`):
//!   synchronous accesses, each starting when the previous one of the call ended and
//!   occupying the banks it touches on the same bank clocks as the event-driven requests; the
//!   call's end is returned. For components whose accesses depend on each other.
//!
//! Lines are interleaved over banks: line `i` is in bank `i mod banks`.

mod cells;
mod endurance;
mod source;
mod stats;
#[cfg(test)]
mod tests;
mod timed;

pub use source::{PcmCompletion, PcmOpKind};
pub use stats::{AccessCost, PcmStats, WearSummary, WornOut};

use crate::config::{PcmConfig, ResolvedTiming, WORD_BITS, WORD_SIZE_BYTES};
use crate::error::{PcmError, PcmResult, argument_error};
use endurance::Endurance;
use nandlab_core::{EventQueue, SimTime};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A byte address in a PCM device.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct PcmAddr(pub u64);

impl PcmAddr {
    /// The address `bytes` further on.
    #[inline]
    pub const fn offset(self, bytes: u64) -> PcmAddr {
        PcmAddr(self.0 + bytes)
    }
}

impl fmt::Display for PcmAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// The bank of the last line a write touched (banks change once per line, not per word).
#[derive(Clone, Copy, Debug)]
struct BankCursor {
    line: u64,
    bank: usize,
}

/// One PCM device: its cells, counters and banks.
#[derive(Debug)]
pub struct PcmDevice {
    config: PcmConfig,
    timing: ResolvedTiming,
    line_shift: u32,
    banks: u64,
    /// Logical contents (what a read returns).
    data: Vec<u8>,
    /// Writes per word (saturating).
    write_counts: Vec<u32>,
    /// Flip-N-Write flags, one bit per word.
    inverted: Vec<u64>,
    endurance: Endurance,
    /// Per-bank work of the access being applied, picoseconds (scratch, reused).
    bank_work_ps: Vec<u64>,
    /// Event-driven state.
    now: SimTime,
    bank_free_at: Vec<SimTime>,
    queue: EventQueue<u32>,
    slots: Vec<PcmCompletion>,
    free_slots: Vec<u32>,
    /// The timed call in progress (`timed.rs`), if any.
    call: Option<timed::CallClock>,
    /// When the controller's hashing unit is free (timed calls).
    compute_free_at: SimTime,
    stats: PcmStats,
}

impl PcmDevice {
    /// Builds a device; `seed` draws the per-word endurance (the only randomness).
    pub fn new(config: PcmConfig, seed: u64) -> PcmResult<Self> {
        config.validate()?;
        crate::memory::check_host_memory(
            "geometry.capacity_bytes",
            config.memory_estimate_bytes(),
        )?;
        let timing = config.timing.resolve()?;
        let words = config.words() as usize;
        let banks = config.geometry.banks as usize;
        Ok(PcmDevice {
            timing,
            line_shift: config.geometry.line_size_bytes.trailing_zeros(),
            banks: banks as u64,
            // zeroed allocations: the OS maps pages in as they are touched
            data: vec![0; config.geometry.capacity_bytes as usize],
            write_counts: vec![0; words],
            inverted: vec![0; words.div_ceil(64)],
            endurance: Endurance::new(&config.endurance, seed),
            bank_work_ps: vec![0; banks],
            now: SimTime::ZERO,
            bank_free_at: vec![SimTime::ZERO; banks],
            queue: EventQueue::with_capacity(64),
            slots: Vec::new(),
            free_slots: Vec::new(),
            call: None,
            compute_free_at: SimTime::ZERO,
            stats: PcmStats {
                bank_busy: vec![SimTime::ZERO; banks],
                ..PcmStats::default()
            },
            config,
        })
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &PcmConfig {
        &self.config
    }

    /// Capacity in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        self.config.geometry.capacity_bytes
    }

    /// Latencies of one line read and one word write.
    pub fn timing(&self) -> ResolvedTiming {
        self.timing
    }

    /// Running totals.
    pub fn stats(&self) -> &PcmStats {
        &self.stats
    }

    /// Writes of the word holding byte `addr` (0 beyond the device).
    pub fn word_writes(&self, addr: PcmAddr) -> u32 {
        self.write_counts
            .get((addr.0 / WORD_SIZE_BYTES) as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Reads `out.len()` bytes at `addr` now; returns the cost on an idle device.
    pub fn read(&mut self, addr: PcmAddr, out: &mut [u8]) -> PcmResult<AccessCost> {
        let cost = self.apply_read(addr, out.len() as u64)?;
        let start = addr.0 as usize;
        out.copy_from_slice(&self.data[start..start + out.len()]);
        Ok(cost)
    }

    /// Charges a read of `len_bytes` at `addr` without copying the bytes out (for components
    /// that keep their own copy of what the PCM holds).
    pub fn charge_read(&mut self, addr: PcmAddr, len_bytes: u64) -> PcmResult<AccessCost> {
        self.apply_read(addr, len_bytes)
    }

    /// Writes `bytes` at `addr` now; returns the cost on an idle device. Only the bits that
    /// change are programmed.
    pub fn write(&mut self, addr: PcmAddr, bytes: &[u8]) -> PcmResult<AccessCost> {
        self.apply_write(addr, bytes)
    }

    /// The bytes at `addr` without charging anything (for tests and inspection).
    pub fn peek(&self, addr: PcmAddr, len_bytes: u64) -> PcmResult<&[u8]> {
        self.check_range("addr", addr, len_bytes)?;
        Ok(&self.data[addr.0 as usize..(addr.0 + len_bytes) as usize])
    }

    /// Wear of the words overlapping `addr .. addr + len_bytes` (a scan of their counters).
    pub fn wear(&self, addr: PcmAddr, len_bytes: u64) -> PcmResult<WearSummary> {
        self.check_range("addr", addr, len_bytes)?;
        if len_bytes == 0 {
            return Ok(WearSummary::default());
        }
        let first = addr.0 / WORD_SIZE_BYTES;
        let last = (addr.0 + len_bytes - 1) / WORD_SIZE_BYTES;
        let counts = &self.write_counts[first as usize..=last as usize];
        let words = counts.len() as u64;
        let mut summary = WearSummary {
            words,
            ..WearSummary::default()
        };
        let mut sum_sq = 0.0;
        for (i, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            summary.words_written += 1;
            summary.writes_total += u64::from(c);
            summary.writes_max = summary.writes_max.max(c);
            sum_sq += f64::from(c) * f64::from(c);
            let used = f64::from(c) / f64::from(self.endurance.limit_writes(first + i as u64));
            summary.endurance_used_max = summary.endurance_used_max.max(used);
        }
        let mean = summary.writes_total as f64 / words as f64;
        summary.writes_mean = mean;
        if mean > 0.0 {
            let variance = (sum_sq / words as f64 - mean * mean).max(0.0);
            summary.writes_cov = variance.sqrt() / mean;
            summary.max_over_mean = f64::from(summary.writes_max) / mean;
        }
        Ok(summary)
    }

    fn check_range(&self, argument: &'static str, addr: PcmAddr, len_bytes: u64) -> PcmResult<()> {
        let capacity = self.capacity_bytes();
        match addr.0.checked_add(len_bytes) {
            Some(end) if end <= capacity => Ok(()),
            _ => Err(argument_error(
                argument,
                format!("{len_bytes} B at {addr} reach beyond the device's {capacity} B"),
            )),
        }
    }

    fn clear_bank_work(&mut self) {
        self.bank_work_ps.iter_mut().for_each(|w| *w = 0);
    }

    /// The latency of the access in `bank_work_ps`: its busiest bank's work.
    fn bank_work_latency(&self) -> SimTime {
        SimTime::from_ps(self.bank_work_ps.iter().copied().max().unwrap_or(0))
    }

    /// `(x / banks, x % banks)`, with shifts when the bank count is a power of two.
    #[inline]
    fn bank_div_rem(&self, x: u64) -> (u64, u64) {
        if self.banks.is_power_of_two() {
            (x >> self.banks.trailing_zeros(), x & (self.banks - 1))
        } else {
            (x / self.banks, x % self.banks)
        }
    }

    fn apply_read(&mut self, addr: PcmAddr, len_bytes: u64) -> PcmResult<AccessCost> {
        self.check_range("addr", addr, len_bytes)?;
        if len_bytes == 0 {
            self.clear_bank_work();
        }
        let mut cost = AccessCost::default();
        if len_bytes > 0 {
            let first_line = addr.0 >> self.line_shift;
            let last_line = (addr.0 + len_bytes - 1) >> self.line_shift;
            let lines = last_line - first_line + 1;
            let line_ps = self.timing.read_line.as_ps();
            let (full, rest) = self.bank_div_rem(lines);
            // every bank reads `full` lines; the `rest` banks from the first line's one more
            let base = full.saturating_mul(line_ps);
            self.bank_work_ps.fill(base);
            let banks = self.banks as usize;
            let mut b = self.bank_div_rem(first_line).1 as usize;
            for _ in 0..rest {
                self.bank_work_ps[b] = (full + 1).saturating_mul(line_ps);
                b += 1;
                if b == banks {
                    b = 0;
                }
            }
            let bits = lines * (self.config.geometry.line_size_bytes * 8);
            cost.lines_read = lines;
            cost.energy_pj = bits as f64 * self.config.energy.read_bit_energy_pj;
            // the busiest bank's work
            cost.latency = SimTime::from_ps(if rest > 0 {
                (full + 1).saturating_mul(line_ps)
            } else {
                base
            });
            debug_assert_eq!(cost.latency, self.bank_work_latency());
        }
        self.stats.reads += 1;
        self.stats.bytes_read += len_bytes;
        self.stats.lines_read += cost.lines_read;
        self.stats.read_energy_pj += cost.energy_pj;
        self.stats.read_time += cost.latency;
        self.occupy_call_banks();
        Ok(cost)
    }

    fn apply_write(&mut self, addr: PcmAddr, bytes: &[u8]) -> PcmResult<AccessCost> {
        self.apply_write_with(addr, bytes, true)
    }

    /// The write of `bytes` at `addr`, word by word (as the model defines it) when `!bulk`.
    #[cfg(test)]
    pub(crate) fn write_word_by_word(
        &mut self,
        addr: PcmAddr,
        bytes: &[u8],
    ) -> PcmResult<AccessCost> {
        self.apply_write_with(addr, bytes, false)
    }

    /// Runs of whole words go through [`PcmDevice::program_run`] when `bulk` (always, outside
    /// the tests that check it against the word-by-word path).
    fn apply_write_with(
        &mut self,
        addr: PcmAddr,
        bytes: &[u8],
        bulk: bool,
    ) -> PcmResult<AccessCost> {
        let len_bytes = bytes.len() as u64;
        self.check_range("addr", addr, len_bytes)?;
        self.clear_bank_work();
        let mut cost = AccessCost::default();
        // `bank_work_ps` counts words per bank in the loop and becomes time after it
        let mut banked = BankCursor {
            line: u64::MAX,
            bank: 0,
        };
        let mut at = addr.0;
        let mut rest = bytes;
        while !rest.is_empty() {
            let word = at / WORD_SIZE_BYTES;
            let in_word = (at % WORD_SIZE_BYTES) as usize;
            let start = (word * WORD_SIZE_BYTES) as usize;
            let mut value = [0u8; 8];
            value.copy_from_slice(&self.data[start..start + 8]);
            let take = (WORD_SIZE_BYTES as usize - in_word).min(rest.len());
            value[in_word..in_word + take].copy_from_slice(&rest[..take]);
            self.program(word, u64::from_le_bytes(value), &mut cost, &mut banked);
            at += take as u64;
            rest = &rest[take..];
            if in_word + take == 8 {
                // aligned now: whole words until the tail, programmed as a run
                let whole = rest.len() / 8 * 8;
                if bulk {
                    self.program_run(at / WORD_SIZE_BYTES, &rest[..whole], &mut cost, &mut banked);
                } else {
                    for (i, chunk) in rest[..whole].chunks_exact(8).enumerate() {
                        let value = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                        let word = at / WORD_SIZE_BYTES + i as u64;
                        self.program(word, value, &mut cost, &mut banked);
                    }
                }
                at += whole as u64;
                rest = &rest[whole..];
            }
        }
        let word_ps = self.timing.write_word.as_ps();
        for work in &mut self.bank_work_ps {
            *work = work.saturating_mul(word_ps);
        }
        cost.energy_pj = cost.bits_programmed as f64 * self.config.energy.write_bit_energy_pj;
        cost.latency = self.bank_work_latency();
        debug_assert!(cost.bits_programmed <= cost.words_written * (WORD_BITS + 1));
        self.stats.writes += 1;
        self.stats.bytes_written += len_bytes;
        self.stats.words_written += cost.words_written;
        self.stats.bits_programmed += cost.bits_programmed;
        self.stats.write_energy_pj += cost.energy_pj;
        self.stats.write_time += cost.latency;
        self.occupy_call_banks();
        Ok(cost)
    }

    /// Writes `new_value` into word `word`: programs the cells that change (data-comparison
    /// write, optionally Flip-N-Write), counts the wear and the bank's work.
    #[inline]
    fn program(
        &mut self,
        word: u64,
        new_value: u64,
        cost: &mut AccessCost,
        banked: &mut BankCursor,
    ) {
        let start = (word * WORD_SIZE_BYTES) as usize;
        let mut old = [0u8; 8];
        old.copy_from_slice(&self.data[start..start + 8]);
        let old_value = u64::from_le_bytes(old);
        if old_value == new_value {
            // nothing to program, whatever the flag
            self.stats.words_unchanged += 1;
            return;
        }
        let (flag_index, flag_bit) = ((word / 64) as usize, 1u64 << (word % 64));
        let was_inverted = self.inverted[flag_index] & flag_bit != 0;
        let flip_n_write = self.config.write.flip_n_write;
        let program = cells::program_word(old_value, was_inverted, new_value, flip_n_write);
        if program.bits == 0 {
            self.stats.words_unchanged += 1;
            return;
        }
        self.data[start..start + 8].copy_from_slice(&new_value.to_le_bytes());
        if program.inverted != was_inverted {
            self.inverted[flag_index] ^= flag_bit;
            if program.inverted {
                self.stats.words_inverted += 1;
            } else {
                self.stats.words_inverted -= 1;
            }
        }
        cost.words_written += 1;
        cost.bits_programmed += u64::from(program.bits);
        let line = (word * WORD_SIZE_BYTES) >> self.line_shift;
        if line != banked.line {
            *banked = BankCursor {
                line,
                bank: self.bank_div_rem(line).1 as usize,
            };
        }
        self.bank_work_ps[banked.bank] += 1;
        let device_word_writes = self.stats.words_written + cost.words_written;
        self.count_word_write(word, device_word_writes);
    }

    /// Programs the whole words of `new` from word `first_word` on, as [`PcmDevice::program`]
    /// would one after another (same cells, counters, wear and bank work), but a line at a
    /// time: a line whose bytes do not change is skipped with one comparison, and the changed
    /// words of a line are counted against its bank once. Without Flip-N-Write no flag can be
    /// set, so a word's cost is the Hamming distance of old and new; with it, word by word.
    fn program_run(
        &mut self,
        first_word: u64,
        new: &[u8],
        cost: &mut AccessCost,
        banked: &mut BankCursor,
    ) {
        debug_assert_eq!(new.len() % WORD_SIZE_BYTES as usize, 0);
        if self.config.write.flip_n_write {
            for (i, chunk) in new.chunks_exact(8).enumerate() {
                let value = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                self.program(first_word + i as u64, value, cost, banked);
            }
            return;
        }
        let words_per_line = (1u64 << self.line_shift) / WORD_SIZE_BYTES;
        let mut word = first_word;
        let mut rest = new;
        while !rest.is_empty() {
            let line = (word * WORD_SIZE_BYTES) >> self.line_shift;
            let in_line = (words_per_line - word % words_per_line) as usize;
            let take = (in_line * 8).min(rest.len());
            let (chunk, tail) = rest.split_at(take);
            rest = tail;
            let start = (word * WORD_SIZE_BYTES) as usize;
            let old = &mut self.data[start..start + take];
            if *old == *chunk {
                self.stats.words_unchanged += (take / 8) as u64;
                word += (take / 8) as u64;
                continue;
            }
            let words = take / 8;
            let counts = &mut self.write_counts[word as usize..word as usize + words];
            let floor = self.endurance.floor_writes;
            let written_before = self.stats.words_written + cost.words_written;
            // branch-free over the line's words: changed words, bits, new counts, and the
            // highest new count of a changed word
            let (mut changed, mut bits, mut highest) = (0u64, 0u64, 0u32);
            for (count, (o, n)) in counts
                .iter_mut()
                .zip(old.chunks_exact(8).zip(chunk.chunks_exact(8)))
            {
                let o = u64::from_le_bytes(o.try_into().expect("8 bytes"));
                let n = u64::from_le_bytes(n.try_into().expect("8 bytes"));
                let diff = o ^ n;
                let c = u32::from(diff != 0);
                changed += u64::from(c);
                bits += u64::from(diff.count_ones());
                *count = count.saturating_add(c);
                highest = highest.max(*count * c);
            }
            if highest >= floor {
                // (rare: near the endurance floor) the wear-out checks, in word order with the
                // device's word-write count at each, as `program` does them
                let mut nth = 0;
                for (k, (o, n)) in old.chunks_exact(8).zip(chunk.chunks_exact(8)).enumerate() {
                    if o == n {
                        continue;
                    }
                    nth += 1;
                    if counts[k] >= floor {
                        note_worn_out(
                            &self.endurance,
                            &mut self.stats,
                            word + k as u64,
                            counts[k],
                            written_before + nth,
                        );
                    }
                }
            }
            self.stats.words_unchanged += words as u64 - changed;
            cost.words_written += changed;
            cost.bits_programmed += bits;
            old.copy_from_slice(chunk);
            if changed > 0 {
                let bank = self.bank_div_rem(line).1 as usize;
                *banked = BankCursor { line, bank };
                self.bank_work_ps[bank] += changed;
            }
            word += (take / 8) as u64;
        }
    }

    #[inline]
    fn count_word_write(&mut self, word: u64, device_word_writes: u64) {
        count_word_write(
            &mut self.write_counts,
            &self.endurance,
            &mut self.stats,
            word,
            device_word_writes,
        );
    }

    /// Submission-time bookkeeping shared by the event-driven requests: checks the time.
    fn enter(&mut self, now: SimTime) -> PcmResult<()> {
        debug_assert!(
            self.call.is_none(),
            "an event-driven request inside a timed call"
        );
        if now < self.now {
            return Err(PcmError::TimeWentBack {
                submitted: now.to_string(),
                now: self.now.to_string(),
            });
        }
        let limit = self.config.requests_in_flight_max as usize;
        if self.queue.len() >= limit {
            return Err(PcmError::Capacity {
                what: "PCM requests in flight (requests_in_flight_max)",
                limit: limit as u64,
            });
        }
        self.now = now;
        Ok(())
    }
}

/// Counts one programming of `word` (saturating) and notes its wear-out.
#[inline]
fn count_word_write(
    write_counts: &mut [u32],
    endurance: &Endurance,
    stats: &mut PcmStats,
    word: u64,
    device_word_writes: u64,
) {
    let count = &mut write_counts[word as usize];
    *count = count.saturating_add(1);
    let count = *count;
    if count >= endurance.floor_writes {
        note_worn_out(endurance, stats, word, count, device_word_writes);
    }
}

/// `word` was programmed for the `count`th time: counts it worn out when that is its limit.
#[inline(never)]
fn note_worn_out(
    endurance: &Endurance,
    stats: &mut PcmStats,
    word: u64,
    count: u32,
    device_word_writes: u64,
) {
    let limit = endurance.limit_writes(word);
    if count == limit {
        stats.words_worn_out += 1;
        if stats.first_worn_out.is_none() {
            stats.first_worn_out = Some(WornOut {
                address_bytes: word * WORD_SIZE_BYTES,
                limit_writes: limit,
                device_word_writes,
            });
        }
    }
}
