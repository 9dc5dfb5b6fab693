//! YCSB's `CoreWorkload`: the operation mix, the key chooser of each request distribution, the
//! transaction-insert counter and key naming, for the core workloads A–F.
//!
//! Scope of "bit-compatible": given the same uniform draws, the operation, key number, key name
//! and scan length of each request equal the reference's. The reference feeds one thread-local
//! stream to every generator (also to field choice and value bytes, which are not generated
//! here); this generator gives the operation chooser, the key chooser and the scan length each
//! their own [`JavaTlr`] stream derived from the seed, so adding a draw to one never shifts the
//! others. Inserts are acknowledged at once (one client thread), so the
//! `AcknowledgedCounterGenerator` is a plain counter.

use super::generators::{
    Discrete, HOTSPOT_DATA_FRACTION, HOTSPOT_OPN_FRACTION, Hotspot, ScrambledZipfian, SkewedLatest,
    UniformLong,
};
use super::random::{JavaTlr, fnvhash64};
use super::zipf::{PLAIN_ZIPF_RANKS_MAX, PlainZipf};
use crate::WorkloadError;
use nandlab_core::SimRng;

/// `requestdistribution`, plus the plain Zipf(α) the SiM paper uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum YcsbDistribution {
    Uniform,
    /// YCSB's `zipfian`: the scrambled Zipfian (θ = 0.99).
    Zipfian,
    Latest,
    Hotspot {
        data_fraction: f64,
        op_fraction: f64,
    },
    /// Not in YCSB: [`PlainZipf`] over the records, rank `r` = key number `r`.
    Zipf {
        alpha: f64,
    },
}

impl YcsbDistribution {
    /// YCSB's hotspot with its default fractions (0.2 of the data gets 0.8 of the operations).
    pub const HOTSPOT: YcsbDistribution = YcsbDistribution::Hotspot {
        data_fraction: HOTSPOT_DATA_FRACTION,
        op_fraction: HOTSPOT_OPN_FRACTION,
    };

    /// Short label for tables: `uniform`, `zipfian`, `latest`, `hotspot`, `zipf0.9`.
    pub fn label(&self) -> String {
        match self {
            YcsbDistribution::Uniform => "uniform".into(),
            YcsbDistribution::Zipfian => "zipfian".into(),
            YcsbDistribution::Latest => "latest".into(),
            YcsbDistribution::Hotspot { .. } => "hotspot".into(),
            YcsbDistribution::Zipf { alpha } => format!("zipf{alpha}"),
        }
    }
}

/// One transaction of the workload. Key numbers are YCSB's `keynum` (see [`key_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YcsbOp {
    Read { keynum: i64 },
    Update { keynum: i64 },
    Insert { keynum: i64 },
    Scan { keynum: i64, length: i64 },
    ReadModifyWrite { keynum: i64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

/// A core-workload parameter set (YCSB property names in the field docs).
#[derive(Clone, Debug, PartialEq)]
pub struct YcsbSpec {
    /// `recordcount`: records loaded before the run (key numbers `0..record_count`).
    pub record_count: i64,
    /// `operationcount`: used only to size the scrambled Zipfian's key space (as the reference).
    pub operation_count: i64,
    /// `readproportion`, `updateproportion`, `insertproportion`, `scanproportion`,
    /// `readmodifywriteproportion`.
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub read_modify_write: f64,
    /// `requestdistribution`.
    pub distribution: YcsbDistribution,
    /// `minscanlength`, `maxscanlength` (uniform scan length).
    pub scan_length_min: i64,
    pub scan_length_max: i64,
    /// `insertorder=hashed` (true, the default) or `ordered`.
    pub hashed_keys: bool,
    /// `zeropadding` (default 1).
    pub zero_padding: usize,
}

impl YcsbSpec {
    /// Core workload `letter` (A–F, case-insensitive) as in YCSB's `workloads/workload?` files.
    pub fn core(
        letter: char,
        record_count: i64,
        operation_count: i64,
    ) -> Result<Self, WorkloadError> {
        let base = YcsbSpec {
            record_count,
            operation_count,
            read: 0.0,
            update: 0.0,
            insert: 0.0,
            scan: 0.0,
            read_modify_write: 0.0,
            distribution: YcsbDistribution::Zipfian,
            scan_length_min: 1,
            scan_length_max: 1000,
            hashed_keys: true,
            zero_padding: 1,
        };
        let spec = match letter.to_ascii_lowercase() {
            'a' => YcsbSpec {
                read: 0.5,
                update: 0.5,
                ..base
            },
            'b' => YcsbSpec {
                read: 0.95,
                update: 0.05,
                ..base
            },
            'c' => YcsbSpec { read: 1.0, ..base },
            'd' => YcsbSpec {
                read: 0.95,
                insert: 0.05,
                distribution: YcsbDistribution::Latest,
                ..base
            },
            'e' => YcsbSpec {
                scan: 0.95,
                insert: 0.05,
                scan_length_max: 100,
                ..base
            },
            'f' => YcsbSpec {
                read: 0.5,
                read_modify_write: 0.5,
                ..base
            },
            other => {
                return Err(WorkloadError::Invalid {
                    key: "ycsb.workload".into(),
                    message: format!("\"{other}\" is not a core workload (expected A–F)"),
                });
            }
        };
        spec.validate()?;
        Ok(spec)
    }

    /// A read/update mix over one distribution (the SiM paper's workloads, §VI-A4).
    pub fn read_update(read: f64, distribution: YcsbDistribution, record_count: i64) -> Self {
        YcsbSpec {
            read,
            update: 1.0 - read,
            distribution,
            ..YcsbSpec::core('c', record_count, 0).expect("workload C is valid")
        }
    }

    /// Names the key of the first bad value.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let bad = |key: &str, message: String| {
            Err(WorkloadError::Invalid {
                key: format!("ycsb.{key}"),
                message,
            })
        };
        if self.record_count < 2 || self.record_count > i64::from(i32::MAX) {
            return bad(
                "recordcount",
                format!("{} is not in 2..=2^31-1", self.record_count),
            );
        }
        if self.operation_count < 0 {
            return bad(
                "operationcount",
                format!("{} is negative", self.operation_count),
            );
        }
        let shares = [
            ("readproportion", self.read),
            ("updateproportion", self.update),
            ("insertproportion", self.insert),
            ("scanproportion", self.scan),
            ("readmodifywriteproportion", self.read_modify_write),
        ];
        for (key, share) in shares {
            if !(0.0..=1.0).contains(&share) {
                return bad(key, format!("{share} is not in [0, 1]"));
            }
        }
        if shares.iter().all(|(_, s)| *s == 0.0) {
            return bad("readproportion", "every operation proportion is 0".into());
        }
        if self.scan_length_min < 1 || self.scan_length_max < self.scan_length_min {
            return bad(
                "maxscanlength",
                format!(
                    "scan lengths {}..={} are not a range ≥ 1",
                    self.scan_length_min, self.scan_length_max
                ),
            );
        }
        match self.distribution {
            YcsbDistribution::Hotspot {
                data_fraction,
                op_fraction,
            } => {
                for (key, f) in [
                    ("hotspotdatafraction", data_fraction),
                    ("hotspotopnfraction", op_fraction),
                ] {
                    if !(0.0..=1.0).contains(&f) {
                        return bad(key, format!("{f} is not in [0, 1]"));
                    }
                }
                let hot = (self.record_count as f64 * data_fraction) as i64;
                if hot < 1 || hot >= self.record_count {
                    return bad(
                        "hotspotdatafraction",
                        format!("{data_fraction} leaves an empty hot or cold set"),
                    );
                }
            }
            YcsbDistribution::Zipf { alpha } => {
                if !(alpha.is_finite() && alpha > 0.0) {
                    return bad("zipf.alpha", format!("{alpha} is not > 0"));
                }
                if self.record_count as u64 > PLAIN_ZIPF_RANKS_MAX {
                    return bad(
                        "recordcount",
                        format!(
                            "{} exceeds the plain Zipf's {PLAIN_ZIPF_RANKS_MAX} ranks",
                            self.record_count
                        ),
                    );
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The transaction stream for `seed`.
    pub fn generator(&self, seed: u64) -> Result<YcsbGenerator, WorkloadError> {
        self.validate()?;
        YcsbGenerator::new(self.clone(), seed)
    }
}

/// YCSB `Utils.hash` (FNV-64) of a key number when keys are hashed, the number itself otherwise:
/// the number printed in the key name and the 64-bit key the storage layer indexes.
pub fn key_value(keynum: i64, hashed: bool) -> i64 {
    if hashed { fnvhash64(keynum) } else { keynum }
}

/// YCSB `CoreWorkload.buildKeyName`: `"user"`, zeros up to `zero_padding` digits, then the
/// decimal [`key_value`].
pub fn key_name(keynum: i64, zero_padding: usize, hashed: bool) -> String {
    let digits = key_value(keynum, hashed).to_string();
    let fill = zero_padding.saturating_sub(digits.len());
    format!("user{}{digits}", "0".repeat(fill))
}

#[derive(Debug)]
enum KeyChooser {
    Uniform(UniformLong),
    Scrambled(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Zipf(PlainZipf),
}

/// The transaction stream of a [`YcsbSpec`] (an endless iterator).
#[derive(Debug)]
pub struct YcsbGenerator {
    spec: YcsbSpec,
    operations: Discrete<OpKind>,
    keys: KeyChooser,
    scan_length: UniformLong,
    /// `transactioninsertkeysequence.lastValue()`: the highest inserted key number.
    last_inserted: i64,
    op_rng: JavaTlr,
    key_rng: JavaTlr,
    scan_rng: JavaTlr,
}

impl YcsbGenerator {
    fn new(spec: YcsbSpec, seed: u64) -> Result<Self, WorkloadError> {
        let stream = |name: &str| JavaTlr::new(SimRng::stream(seed, name).below(u64::MAX));
        let mut key_rng = stream("ycsb.keys");
        let mut weights = Vec::new();
        for (share, kind) in [
            (spec.read, OpKind::Read),
            (spec.update, OpKind::Update),
            (spec.insert, OpKind::Insert),
            (spec.scan, OpKind::Scan),
            (spec.read_modify_write, OpKind::ReadModifyWrite),
        ] {
            if share > 0.0 {
                weights.push((share, kind));
            }
        }
        let (start, count) = (0, spec.record_count);
        let keys = match spec.distribution {
            YcsbDistribution::Uniform => {
                KeyChooser::Uniform(UniformLong::new(start, start + count - 1))
            }
            YcsbDistribution::Zipfian => {
                // Reference: expectednewkeys = (int) (opcount * insertproportion * 2.0).
                let expected_new =
                    i64::from((spec.operation_count as f64 * spec.insert * 2.0) as i32);
                KeyChooser::Scrambled(ScrambledZipfian::new(
                    start,
                    start + count + expected_new,
                    &mut key_rng,
                ))
            }
            YcsbDistribution::Latest => {
                KeyChooser::Latest(SkewedLatest::new(count - 1, &mut key_rng))
            }
            YcsbDistribution::Hotspot {
                data_fraction,
                op_fraction,
            } => KeyChooser::Hotspot(Hotspot::new(
                start,
                start + count - 1,
                data_fraction,
                op_fraction,
            )),
            YcsbDistribution::Zipf { alpha } => {
                KeyChooser::Zipf(PlainZipf::new(count as u64, alpha))
            }
        };
        Ok(YcsbGenerator {
            scan_length: UniformLong::new(spec.scan_length_min, spec.scan_length_max),
            last_inserted: count - 1,
            operations: Discrete::new(weights),
            keys,
            spec,
            op_rng: stream("ycsb.operations"),
            key_rng,
            scan_rng: stream("ycsb.scan-length"),
        })
    }

    pub fn spec(&self) -> &YcsbSpec {
        &self.spec
    }

    /// Key numbers loaded before the run (`0..recordcount`, YCSB's load phase).
    pub fn loaded_keynums(&self) -> std::ops::Range<i64> {
        0..self.spec.record_count
    }

    /// The highest key number inserted so far.
    pub fn last_inserted(&self) -> i64 {
        self.last_inserted
    }

    /// One draw of the key chooser, without the reference's retry loop.
    fn draw_key(&mut self) -> i64 {
        let rng = &mut self.key_rng;
        match &mut self.keys {
            KeyChooser::Uniform(g) => g.next_value(rng),
            KeyChooser::Scrambled(g) => g.next_value(rng),
            KeyChooser::Latest(g) => g.next_value(self.last_inserted, rng),
            KeyChooser::Hotspot(g) => g.next_value(rng),
            KeyChooser::Zipf(g) => g.next_value(rng) as i64,
        }
    }

    /// `CoreWorkload.nextKeynum`: draw until the key (truncated to `int`, as the reference's
    /// `intValue()`) has been inserted.
    pub fn next_keynum(&mut self) -> i64 {
        loop {
            let keynum = i64::from(self.draw_key() as i32);
            if keynum <= self.last_inserted {
                return keynum;
            }
        }
    }

    pub fn next_op(&mut self) -> YcsbOp {
        match self.operations.next_value(&mut self.op_rng) {
            OpKind::Read => YcsbOp::Read {
                keynum: self.next_keynum(),
            },
            OpKind::Update => YcsbOp::Update {
                keynum: self.next_keynum(),
            },
            OpKind::ReadModifyWrite => YcsbOp::ReadModifyWrite {
                keynum: self.next_keynum(),
            },
            OpKind::Scan => {
                let keynum = self.next_keynum();
                let length = self.scan_length.next_value(&mut self.scan_rng);
                YcsbOp::Scan { keynum, length }
            }
            OpKind::Insert => {
                self.last_inserted += 1;
                YcsbOp::Insert {
                    keynum: self.last_inserted,
                }
            }
        }
    }
}

impl Iterator for YcsbGenerator {
    type Item = YcsbOp;

    fn next(&mut self) -> Option<YcsbOp> {
        Some(self.next_op())
    }
}

/// The shares of the four most frequent keys among `draws` key choices (the SiM paper's
/// Table III), in percent, most frequent first.
pub fn query_concentration(
    spec: &YcsbSpec,
    seed: u64,
    draws: u64,
) -> Result<[f64; 4], WorkloadError> {
    let mut generator = spec.generator(seed)?;
    // the draws sorted, then counted run by run (faster than a hash map of counts)
    let mut keynums: Vec<i64> = (0..draws).map(|_| generator.next_keynum()).collect();
    keynums.sort_unstable();
    let mut top: Vec<u64> = keynums
        .chunk_by(|a, b| a == b)
        .map(|run| run.len() as u64)
        .collect();
    top.sort_unstable_by(|a, b| b.cmp(a));
    let mut shares = [0.0; 4];
    for (share, count) in shares.iter_mut().zip(top) {
        *share = 100.0 * count as f64 / draws.max(1) as f64;
    }
    Ok(shares)
}

/// Table III as text: one row per distribution, shares of the 1st–4th most frequent keys.
pub fn concentration_table(rows: &[(String, [f64; 4])]) -> String {
    let mut out = String::from("distribution      1st      2nd      3rd      4th\n");
    for (label, shares) in rows {
        out.push_str(&format!(
            "{label:<14}{:>7.2}%{:>8.2}%{:>8.2}%{:>8.2}%\n",
            shares[0], shares[1], shares[2], shares[3]
        ));
    }
    out
}
