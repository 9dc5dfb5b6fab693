//! fio options that reshape a job's offsets and sizes beyond what a [`SyntheticSpec`]
//! expresses: `bssplit` (block sizes drawn from a split), `rw=read:N` offset modifiers
//! (holes or backwards I/O), and `random_distribution=zoned`. Each follows fio's code
//! (`options.c` for the parsing, `io_u.c` `get_next_buflen`/`get_next_seq_offset`/
//! `__get_next_rand_offset_zoned` for the draws).
//!
//! The job's synthetic generator still draws each request's direction and arrival; a
//! [`Shaped`] stream replaces its offset and size.

use crate::synthetic::SyntheticGenerator;
use crate::{BlockRequest, IoOp};
use nandlab_core::SimRng;

/// One `bssplit` entry list per direction (read, write, trim): `(bytes, percent)`, sorted
/// as fio does (by percentage, largest first), percentages summing to 100.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockSplit {
    /// Read, write and trim splits.
    pub directions: [Vec<(u64, u32)>; 3],
}

impl BlockSplit {
    /// Parses `bs/perc:bs/perc[,…[,…]]` with fio's rules: one list applies to every
    /// direction, two are read and write (trim takes the write list), three are read, write,
    /// trim; entries without a percentage share what is left of 100.
    pub fn parse(text: &str) -> Result<BlockSplit, String> {
        let parts: Vec<&str> = text.split(',').collect();
        let lists = match parts.len() {
            1 => [parts[0], parts[0], parts[0]],
            2 => [parts[0], parts[1], parts[1]],
            3 => [parts[0], parts[1], parts[2]],
            _ => {
                return Err(format!(
                    "bad bssplit \"{text}\": at most 3 lists (read,write,trim)"
                ));
            }
        };
        let mut directions: [Vec<(u64, u32)>; 3] = Default::default();
        for (direction, list) in directions.iter_mut().zip(lists) {
            *direction = parse_split_list(list.trim(), text)?;
        }
        Ok(BlockSplit { directions })
    }

    /// The smallest block size of any direction.
    pub fn min_bytes(&self) -> u64 {
        self.directions
            .iter()
            .flatten()
            .map(|(bytes, _)| *bytes)
            .min()
            .unwrap_or(1)
    }

    /// The largest block size of any direction.
    pub fn max_bytes(&self) -> u64 {
        self.directions
            .iter()
            .flatten()
            .map(|(bytes, _)| *bytes)
            .max()
            .unwrap_or(1)
    }

    /// A size for `op` from `u` in [0, 1): the first entry whose cumulative percentage covers
    /// `u` and that `fits` (fio's `io_u_fits`); else the smallest size of the list.
    fn draw(&self, op: IoOp, u: f64, fits: impl Fn(u64) -> bool) -> u64 {
        let list = &self.directions[direction_index(op)];
        let mut cumulative = 0.0;
        for (bytes, percent) in list {
            if *percent == 0 {
                continue;
            }
            cumulative += f64::from(*percent);
            if u * 100.0 < cumulative && fits(*bytes) {
                return *bytes;
            }
        }
        list.iter().map(|(b, _)| *b).min().unwrap_or(1)
    }
}

fn direction_index(op: IoOp) -> usize {
    match op {
        IoOp::Read => 0,
        IoOp::Write => 1,
        IoOp::Trim => 2,
    }
}

fn parse_split_list(list: &str, whole: &str) -> Result<Vec<(u64, u32)>, String> {
    let bad = |why: &str| format!("bad bssplit \"{whole}\": {why}");
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for entry in list.split(':') {
        let (size, percent) = match entry.split_once('/') {
            Some((s, p)) => (s, Some(p)),
            None => (entry, None),
        };
        let bytes = super::parse_fio_size(size).map_err(|e| bad(&e))?;
        if bytes == 0 || bytes > crate::trace::MAX_REQUEST_BYTES {
            return Err(bad("block sizes are 1 byte to 1 GiB"));
        }
        let percent = match percent.map(str::trim) {
            None | Some("") => None,
            Some(p) => Some(
                p.parse::<u32>()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| bad("percentages are 0 to 100"))?,
            ),
        };
        entries.push((bytes, percent));
    }
    if entries.len() > 64 {
        return Err(bad("at most 64 entries per direction (fio's BSSPLIT_MAX)"));
    }
    let given: u32 = entries.iter().filter_map(|(_, p)| *p).sum();
    let missing = entries.iter().filter(|(_, p)| p.is_none()).count() as u32;
    if given > 100 {
        return Err(bad("percentages add to more than 100"));
    }
    let share = (100 - given).checked_div(missing).unwrap_or(0);
    let mut out: Vec<(u64, u32)> = entries
        .into_iter()
        .map(|(bytes, p)| (bytes, p.unwrap_or(share)))
        .collect();
    if out.iter().map(|(_, p)| p).sum::<u32>() == 0 {
        return Err(bad("no entry has a percentage above 0"));
    }
    out.sort_by_key(|entry| std::cmp::Reverse(entry.1));
    Ok(out)
}

/// `random_distribution=zoned:a/s:…`: `a` percent of the accesses fall in the next `s`
/// percent of the region. Entries without `s` share what is left of 100 (fio's rule).
#[derive(Clone, Debug, PartialEq)]
pub struct Zones {
    /// `(access percent, size percent)` in order.
    pub zones: Vec<(u32, u32)>,
}

impl Zones {
    /// Parses the part after `zoned:`; access percentages must add up to 100, as in fio.
    pub fn parse(text: &str) -> Result<Zones, String> {
        let bad = |why: &str| format!("bad random_distribution \"zoned:{text}\": {why}");
        if text.contains(',') {
            return Err(bad("one zone list for every direction is supported"));
        }
        let mut zones: Vec<(Option<u32>, Option<u32>)> = Vec::new();
        for entry in text.split(':').filter(|e| !e.is_empty()) {
            let (access, size) = entry.split_once('/').unwrap_or((entry, ""));
            let number = |t: &str| -> Result<Option<u32>, String> {
                match t.trim() {
                    "" => Ok(None),
                    t => t
                        .parse::<u32>()
                        .ok()
                        .filter(|p| *p <= 100)
                        .map(Some)
                        .ok_or_else(|| bad("percentages are 0 to 100")),
                }
            };
            zones.push((number(access)?, number(size)?));
        }
        if zones.is_empty() || zones.len() > 256 {
            return Err(bad("1 to 256 zones"));
        }
        let fill = |values: Vec<Option<u32>>, what: &str| -> Result<Vec<u32>, String> {
            let given: u32 = values.iter().flatten().sum();
            let missing = values.iter().filter(|v| v.is_none()).count() as u32;
            if given > 100 {
                return Err(bad(&format!("{what} percentages add to more than 100")));
            }
            let share = (100 - given).checked_div(missing).unwrap_or(0);
            Ok(values.into_iter().map(|v| v.unwrap_or(share)).collect())
        };
        let access = fill(zones.iter().map(|z| z.0).collect(), "access")?;
        let size = fill(zones.iter().map(|z| z.1).collect(), "size")?;
        if access.iter().sum::<u32>() != 100 {
            return Err(bad("access percentages must add up to 100"));
        }
        Ok(Zones {
            zones: access.into_iter().zip(size).collect(),
        })
    }

    /// A block index in `0..blocks`: a zone by access percentage, then a uniform block in it.
    fn draw(&self, blocks: u64, rng: &mut SimRng) -> u64 {
        let u = rng.unit_f64() * 100.0;
        let mut cumulative_access = 0.0;
        let mut start_percent = 0u64;
        for (access, size) in &self.zones {
            cumulative_access += f64::from(*access);
            let (first, length) = zone_blocks(blocks, start_percent, u64::from(*size));
            start_percent += u64::from(*size);
            if u < cumulative_access && length > 0 {
                return first + rng.below(length);
            }
        }
        rng.below(blocks)
    }
}

fn zone_blocks(blocks: u64, start_percent: u64, size_percent: u64) -> (u64, u64) {
    let scale = |p: u64| ((u128::from(blocks) * u128::from(p.min(100))) / 100) as u64;
    let first = scale(start_percent).min(blocks.saturating_sub(1));
    let end = scale(start_percent + size_percent).min(blocks);
    (first, end.saturating_sub(first))
}

/// io_uring_cmd's `write_mode`: each write is issued as one of NVMe's write commands, drawn
/// by percentage. The simulated device sees Write and Write Zeroes as writes of the range,
/// Write Uncorrectable as a trim (the range's data is gone), and Verify as a read (the
/// device reads the media, nothing is transferred). `zone_append` (the whole job's writes,
/// as fio takes it) is a write at the zone's write pointer, which is where `zonemode=zbd`
/// puts every write: the job must have `zonemode=zbd` (checked once the job is complete).
#[derive(Clone, Debug, PartialEq)]
pub struct WriteModes {
    /// `(operation on the simulated device, percent)`, percentages summing to 100.
    pub modes: Vec<(IoOp, u32)>,
    /// `write_mode=zone_append`.
    pub zone_append: bool,
}

impl WriteModes {
    /// Parses `mode` or `mode/perc:mode/perc…` (modes `write`, `zeroes`, `uncor`, `verify`;
    /// fio's rules: several entries add up to 100).
    pub fn parse(text: &str) -> Result<WriteModes, String> {
        let bad = |why: &str| format!("bad write_mode \"{text}\": {why}");
        let op = |mode: &str| match mode.trim() {
            "write" | "zeroes" => Ok(IoOp::Write),
            "uncor" => Ok(IoOp::Trim),
            "verify" => Ok(IoOp::Read),
            "zone_append" => Err(bad("zone_append takes no percentage (all writes append)")),
            _ => Err(bad("expected write, zeroes, uncor, verify or zone_append")),
        };
        if text.trim() == "zone_append" {
            return Ok(WriteModes {
                modes: vec![(IoOp::Write, 100)],
                zone_append: true,
            });
        }
        if !text.contains('/') {
            return Ok(WriteModes {
                modes: vec![(op(text)?, 100)],
                zone_append: false,
            });
        }
        let mut modes = Vec::new();
        for entry in text.split(':') {
            let (mode, percent) = entry
                .split_once('/')
                .ok_or_else(|| bad("expected mode/percent entries"))?;
            let percent = percent
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| bad("percentages are 0 to 100"))?;
            modes.push((op(mode)?, percent));
        }
        if modes.len() < 2 || modes.len() > 8 {
            return Err(bad("2 to 8 entries"));
        }
        if modes.iter().map(|(_, p)| p).sum::<u32>() != 100 {
            return Err(bad("percentages must add up to 100"));
        }
        Ok(WriteModes {
            modes,
            zone_append: false,
        })
    }

    fn draw(&self, u: f64) -> IoOp {
        let mut cumulative = 0.0;
        for (op, percent) in &self.modes {
            cumulative += f64::from(*percent);
            if u * 100.0 < cumulative {
                return *op;
            }
        }
        IoOp::Write
    }
}

/// What a job asks beyond its spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamShape {
    /// `bssplit`.
    pub split: Option<BlockSplit>,
    /// `rw=read:N`: bytes added to the next sequential offset (negative: backwards).
    pub seq_add: i64,
    /// `random_distribution=zoned`.
    pub zones: Option<Zones>,
    /// Whether offsets are random (`rand*`).
    pub random: bool,
    /// Bytes the job moves per pass (with `bssplit`, fio counts bytes, not requests).
    pub io_bytes: u64,
    /// `write_mode` (io_uring_cmd).
    pub write_modes: Option<WriteModes>,
    /// `random_distribution=sequence:…`: block indices (of the smallest block size) in
    /// order, repeated; with `random_sequence_stride`, each repetition moves on by the
    /// sequence's length.
    pub sequence: Option<(Vec<u64>, bool)>,
    /// `nrfiles`: the region is split into this many files, served round-robin (1: none).
    pub files: u64,
    /// `zonemode=strided`: the zones of a sequential job.
    pub strided: Option<super::zoned::Strided>,
    /// `sprandom=1`: fio's steady-state preconditioner chooses the offsets.
    pub sprandom: Option<super::SpRandomOptions>,
}

impl StreamShape {
    /// Whether the shape changes anything (else the spec's generator runs as is).
    pub fn is_plain(&self) -> bool {
        self.split.is_none()
            && self.seq_add == 0
            && self.zones.is_none()
            && self.write_modes.is_none()
            && self.sequence.is_none()
            && self.files <= 1
            && self.strided.is_none()
            && self.sprandom.is_none()
    }
}

/// Offsets and sizes of a shaped job, on top of its synthetic generator (which still draws
/// directions and arrivals).
#[derive(Clone, Debug)]
pub(crate) struct Shaped {
    base: SyntheticGenerator,
    shape: StreamShape,
    region_start: u64,
    region_bytes: u64,
    block_bytes: u64,
    align_bytes: u64,
    /// fio's `last_pos[ddir]` relative to its file, per file and direction.
    last_pos: Vec<[u64; 3]>,
    /// Requests placed so far (the file of the next one, with `nrfiles`).
    turn: u64,
    /// fio's `io_issues[ddir]`: requests issued per direction.
    issued: [u64; 3],
    /// `zonemode=strided`: fio's `file_offset` (the zone's start in the region) and
    /// `zone_bytes` (bytes moved in the zone).
    zone: (u64, u64),
    rng: SimRng,
}

impl Shaped {
    pub(crate) fn new(
        base: SyntheticGenerator,
        shape: StreamShape,
        spec: &crate::synthetic::SyntheticSpec,
    ) -> Shaped {
        Shaped {
            base,
            region_start: spec.offset_bytes,
            region_bytes: spec.span_bytes,
            block_bytes: spec.request_size_bytes,
            align_bytes: spec
                .alignment_bytes
                .unwrap_or(spec.request_size_bytes)
                .max(1),
            last_pos: vec![[0; 3]],
            turn: 0,
            issued: [0; 3],
            zone: (0, 0),
            rng: SimRng::stream(spec.seed, "workload.fio.shape"),
            shape,
        }
    }

    pub(crate) fn next(&mut self) -> Option<BlockRequest> {
        let drawn = self.base.next()?;
        let mut request = self.place(drawn)?;
        if let Some(modes) = &self.shape.write_modes
            && request.op == IoOp::Write
        {
            request.op = modes.draw(self.rng.unit_f64());
            if request.op != IoOp::Write {
                request.placement_id = 0;
            }
        }
        Some(request)
    }

    /// The request's offset and size (its direction and arrival are the base generator's).
    fn place(&mut self, mut request: BlockRequest) -> Option<BlockRequest> {
        // nrfiles: the files split the region; fio's default file_service_type=roundrobin
        // moves to the next file after every request
        let files = self.shape.files.max(1);
        let file = (self.turn % files) as usize;
        self.turn += 1;
        let region = if files > 1 {
            self.region_bytes / files / self.align_bytes * self.align_bytes
        } else {
            self.region_bytes
        };
        if region == 0 {
            // (refused when the job is built: files smaller than a block)
            return None;
        }
        let start = self.region_start + file as u64 * region;
        if !self.shape.random {
            // fio's get_next_seq_offset: holes (or backwards steps) between requests
            let d = direction_index(request.op);
            if self.last_pos.len() <= file {
                self.last_pos.resize(file + 1, [0; 3]);
            }
            self.next_strided_zone(d, region);
            let mut pos = self.last_pos[file][d];
            if pos >= region {
                pos = 0;
            }
            if pos != 0 && self.shape.seq_add != 0 {
                let moved = pos as i128 + i128::from(self.shape.seq_add);
                pos = if moved >= 0 && (moved as u64) < region {
                    moved as u64
                } else if self.shape.seq_add > 0 {
                    0
                } else {
                    (region as i128 + i128::from(self.shape.seq_add)).max(0) as u64
                };
            }
            let size = self.size_for(request.op, pos, region);
            if pos + size > region {
                // the end of the region: start over from its beginning
                pos = 0;
            }
            let size = size.min(region);
            request.offset_bytes = start + pos;
            request.size_bytes = size;
            self.last_pos[file][d] = pos + size;
            self.zone.1 += size;
            return Some(request);
        }
        // the base draw over the whole region, folded into the file of the turn
        let mut pos = (request.offset_bytes - self.region_start) % region;
        if let Some((sequence, stride)) = &self.shape.sequence {
            // fio's __get_next_rand_offset_sequence; a block past the region ends the job
            let d = direction_index(request.op);
            let count = self.issued[d];
            self.issued[d] += 1;
            let length = sequence.len() as u64;
            let mut block = sequence[(count % length) as usize];
            if *stride {
                block = block.saturating_add((count / length).saturating_mul(length));
            }
            pos = block.checked_mul(self.block_bytes)?;
            if pos.checked_add(self.block_bytes)? > region {
                return None;
            }
        }
        if let Some(zones) = &self.shape.zones {
            let blocks = region.saturating_sub(self.block_bytes) / self.align_bytes + 1;
            pos = zones.draw(blocks, &mut self.rng) * self.align_bytes;
        }
        let size = self.size_for(request.op, pos, region).min(region);
        if pos + size > region {
            pos = (region - size) / self.align_bytes * self.align_bytes;
        }
        request.offset_bytes = start + pos;
        request.size_bytes = size;
        Some(request)
    }

    /// fio's `setup_strided_zone_mode` before a sequential request in direction `d` (one
    /// file): past `zonesize` bytes in the zone, on to the next zone (from the region's start
    /// past its end); past the zone's range, back to the zone's start.
    fn next_strided_zone(&mut self, d: usize, region: u64) {
        let Some(z) = self.shape.strided else {
            return;
        };
        if self.zone.1 >= z.size {
            self.zone.1 = 0;
            self.zone.0 = self.zone.0.saturating_add(z.range).saturating_add(z.skip);
            if self.zone.0 >= region {
                self.zone.0 = 0;
            }
            self.last_pos[0][d] = self.zone.0;
        }
        if self.last_pos[0][d] >= self.zone.0.saturating_add(z.range) {
            self.last_pos[0][d] = self.zone.0;
        }
    }

    fn size_for(&mut self, op: IoOp, pos: u64, region: u64) -> u64 {
        match &self.shape.split {
            Some(split) => {
                let u = self.rng.unit_f64();
                split.draw(op, u, |bytes| pos + bytes <= region)
            }
            None => self.block_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bssplit_follows_fios_parsing_rules() {
        let s = BlockSplit::parse("4k/60:64k/40").unwrap();
        assert_eq!(s.directions[0], vec![(4096, 60), (65536, 40)]);
        assert_eq!(s.directions[0], s.directions[2]);
        let s = BlockSplit::parse("64k/40:1024k/60,1024k/100").unwrap();
        assert_eq!(s.directions[0], vec![(1 << 20, 60), (65536, 40)]);
        assert_eq!(s.directions[1], vec![(1 << 20, 100)]);
        assert_eq!(
            s.directions[2], s.directions[1],
            "trim takes the write list"
        );
        let s = BlockSplit::parse("4k/50:8k/:16k/").unwrap();
        assert_eq!(s.directions[1], vec![(4096, 50), (8192, 25), (16384, 25)]);
        assert!(BlockSplit::parse("4k/60:8k/60").is_err());
        assert!(BlockSplit::parse("4k/x").is_err());
        assert_eq!(BlockSplit::parse("512/10:64k/90").unwrap().min_bytes(), 512);
    }

    #[test]
    fn zones_follow_fios_parsing_rules() {
        let z = Zones::parse("50/5:30/15:20/").unwrap();
        assert_eq!(z.zones, vec![(50, 5), (30, 15), (20, 80)]);
        assert!(Zones::parse("50/5:30/15").is_err(), "access adds to 80");
        let mut rng = SimRng::seed_from_u64(1);
        let mut first_zone = 0;
        for _ in 0..10_000 {
            if z.draw(1000, &mut rng) < 50 {
                first_zone += 1;
            }
        }
        assert!((4_700..5_300).contains(&first_zone), "{first_zone}");
    }
}

/// The reshaped jobs end to end, through the job file, against fio's semantics computed by
/// hand (offsets of `get_next_seq_offset`, bytes of `bssplit`, ratios of `flow`).
#[cfg(test)]
mod job_file_tests {
    use crate::fio::{FioContext, FioJobFile};
    use crate::{BlockRequest, IoOp};

    const KIB: u64 = 1024;
    const CONTEXT: FioContext = FioContext {
        device_size_bytes: 1 << 30,
        seed: 3,
    };

    fn file(text: &str) -> FioJobFile {
        FioJobFile::parse(text.as_bytes(), "job.fio").unwrap_or_else(|e| panic!("{e}"))
    }

    fn requests(text: &str) -> Vec<BlockRequest> {
        file(text).generator(&CONTEXT).expect("valid").collect()
    }

    fn offsets_kib(requests: &[BlockRequest]) -> Vec<u64> {
        requests.iter().map(|r| r.offset_bytes / KIB).collect()
    }

    #[test]
    fn backwards_reads_step_back_and_wrap_to_the_end_as_fio_does() {
        // fio examples/backwards-read.fio on a 64 KiB region: 0, then end - 8k, stepping 4k back
        let run = requests("[a]\nbs=4k\nrw=read:-8k\nsize=64k\n");
        assert_eq!(
            offsets_kib(&run),
            [0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0]
        );
        assert!(
            run.iter()
                .all(|r| r.op == IoOp::Read && r.size_bytes == 4 * KIB)
        );
    }

    #[test]
    fn holes_skip_bytes_and_wrap_to_the_start() {
        let run = requests("[a]\nbs=4k\nrw=write:4k\nsize=64k\n");
        assert_eq!(
            offsets_kib(&run),
            [0, 8, 16, 24, 32, 40, 48, 56, 0, 8, 16, 24, 32, 40, 48, 56]
        );
        assert!(run.iter().all(|r| r.op == IoOp::Write));
    }

    #[test]
    fn bssplit_draws_sizes_by_percentage_and_counts_bytes() {
        let run = requests("[a]\nrw=randrw\nrwmixread=80\nbssplit=4k/75:64k/25\nsize=64m\n");
        let bytes: u64 = run.iter().map(|r| r.size_bytes).sum();
        assert!(
            (64 << 20..(64 << 20) + 64 * KIB).contains(&bytes),
            "fio stops after the job's bytes: {bytes}"
        );
        let small = run.iter().filter(|r| r.size_bytes == 4 * KIB).count();
        let large = run.iter().filter(|r| r.size_bytes == 64 * KIB).count();
        assert_eq!(small + large, run.len());
        let small_share = small as f64 / run.len() as f64;
        assert!((0.72..0.78).contains(&small_share), "{small_share}");
        let reads = run.iter().filter(|r| r.op == IoOp::Read).count() as f64;
        assert!((0.77..0.83).contains(&(reads / run.len() as f64)));
        // aligned to the smallest size and inside the region
        assert!(
            run.iter()
                .all(|r| r.offset_bytes % (4 * KIB) == 0 && r.end_bytes() <= 64 << 20)
        );
        // separate lists: reads 64k, writes 4k
        let run = requests("[a]\nrw=randrw\nbssplit=64k/100,4k/100\nsize=16m\n");
        for r in &run {
            let expected = if r.op == IoOp::Read { 64 } else { 4 };
            assert_eq!(r.size_bytes, expected * KIB, "{r:?}");
        }
    }

    #[test]
    fn sequential_bssplit_advances_by_the_size_drawn() {
        let run = requests("[a]\nrw=write\nbssplit=4k/50:8k/50\nsize=1m\n");
        let mut expected = 0;
        for r in &run {
            assert_eq!(r.offset_bytes, expected % (1 << 20), "{r:?}");
            expected = r.end_bytes();
        }
        let bytes: u64 = run.iter().map(|r| r.size_bytes).sum();
        assert_eq!(
            bytes,
            1 << 20,
            "one pass of the region, no request past its end"
        );
    }

    #[test]
    fn zoned_accesses_fall_in_their_zones() {
        // fio examples/rand-zones.fio: 50% in the first 5%, 30% in the next 15%, 20% after
        let run = requests(
            "[a]\nbs=4k\nrw=randread\nnorandommap\nsize=64m\nrandom_distribution=zoned:50/5:30/15:20/\n",
        );
        let share = |low: f64, high: f64| {
            let n = run
                .iter()
                .filter(|r| {
                    let at = r.offset_bytes as f64 / (64u64 << 20) as f64;
                    (low..high).contains(&at)
                })
                .count();
            n as f64 / run.len() as f64
        };
        assert_eq!(run.len(), 16_384);
        assert!((0.48..0.52).contains(&share(0.0, 0.05)));
        assert!((0.28..0.32).contains(&share(0.05, 0.20)));
        assert!((0.18..0.22).contains(&share(0.20, 1.0)));
    }

    #[test]
    fn flow_weights_set_the_ratio_of_the_jobs() {
        // fio examples/flow.fio: flow=1 (writes) and flow=8 (reads), same iodepth
        let text = "[global]\niodepth=256\nbs=8k\nsize=64m\nflow_sleep=1000\n\
                    [w]\nrw=write\nflow=1\n[r]\nrw=randread\nflow=8\n";
        let run: Vec<BlockRequest> = file(text).generator(&CONTEXT).unwrap().take(900).collect();
        let writes = run.iter().filter(|r| r.op == IoOp::Write).count();
        assert_eq!(writes, 100, "1 write per 8 reads");
        let notes = file(text).notes(&CONTEXT).unwrap();
        assert!(
            notes.iter().any(|n| n.starts_with("line 5: flow:")),
            "{notes:?}"
        );
    }

    #[test]
    fn host_only_keys_run_with_a_note_naming_their_line() {
        let text = "[a]\nrw=write\nsize=1m\nsync=1\nfsync=4\nwritefua=1\npi_act=1\n";
        let notes = file(text).notes(&CONTEXT).unwrap();
        let flushes: Vec<&String> = notes.iter().filter(|n| n.contains("flush")).collect();
        assert_eq!(flushes.len(), 1, "one note per kind: {notes:?}");
        assert!(flushes[0].starts_with("line 4: sync/fsync"), "{notes:?}");
        assert!(notes.iter().any(|n| n.starts_with("line 7: protection")));
        // the requests are those of the job without the keys
        assert_eq!(requests(text), requests("[a]\nrw=write\nsize=1m\n"));
        // as 0 (their default) they need no note
        let notes = file("[a]\nsize=1m\nsync=0\n").notes(&CONTEXT).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn a_garbage_key_gives_a_short_error() {
        let garbage = "x".repeat(2_000);
        let e = FioJobFile::parse(format!("[a]\n{garbage}\n").as_bytes(), "job.fio")
            .unwrap_err()
            .to_string();
        assert!(e.len() < 200, "{} bytes: {e}", e.len());
        assert!(e.starts_with("job.fio:2: unsupported key \"xxxx"), "{e}");
    }
}

#[cfg(test)]
mod verify_and_write_mode_tests {
    use crate::fio::{FioContext, FioJobFile};
    use crate::{BlockRequest, IoOp};

    const CONTEXT: FioContext = FioContext {
        device_size_bytes: 1 << 30,
        seed: 5,
    };

    fn requests(text: &str) -> Vec<BlockRequest> {
        FioJobFile::parse(text.as_bytes(), "job.fio")
            .unwrap_or_else(|e| panic!("{e}"))
            .generator(&CONTEXT)
            .expect("valid")
            .collect()
    }

    #[test]
    fn verify_backlog_reads_back_every_n_writes_then_the_rest() {
        // 10 writes, backlog 4: w w w w r r r r w w w w r r r r w w r r
        let run = requests("[a]\nrw=write\nbs=4k\nsize=40k\nverify=crc32c\nverify_backlog=4\n");
        let ops: String = run
            .iter()
            .map(|r| if r.op == IoOp::Write { 'w' } else { 'r' })
            .collect();
        assert_eq!(ops, "wwwwrrrrwwwwrrrrwwrr");
        let written: Vec<u64> = run
            .iter()
            .filter(|r| r.op == IoOp::Write)
            .map(|r| r.offset_bytes)
            .collect();
        let read: Vec<u64> = run
            .iter()
            .filter(|r| r.op == IoOp::Read)
            .map(|r| r.offset_bytes)
            .collect();
        assert_eq!(written, read, "each write read back once, in order");
        // overlapping random writes are read back as written (fio's io history)
        let run = requests(
            "[a]\nrw=randwrite\nnorandommap\nbs=4k\nsize=1m\nloops=2\nverify=md5\nverify_backlog=1\n",
        );
        assert_eq!(run.len(), 2 * 2 * 256);
        for pair in run.chunks(2) {
            assert_eq!((pair[0].op, pair[1].op), (IoOp::Write, IoOp::Read));
            assert_eq!(pair[0].offset_bytes, pair[1].offset_bytes);
        }
    }

    #[test]
    fn write_modes_are_drawn_per_write_as_device_operations() {
        let run = requests(
            "[a]\nrw=write\nbs=4k\nsize=64m\nwrite_mode=write/40:zeroes/30:uncor/20:verify/10\n",
        );
        let share = |op: IoOp| run.iter().filter(|r| r.op == op).count() as f64 / run.len() as f64;
        assert!((0.68..0.72).contains(&share(IoOp::Write)));
        assert!((0.18..0.22).contains(&share(IoOp::Trim)));
        assert!((0.08..0.12).contains(&share(IoOp::Read)));
        // still one sequential pass of the region
        assert!(
            run.iter()
                .enumerate()
                .all(|(i, r)| r.offset_bytes == i as u64 * 4096)
        );
        let all = requests("[a]\nrw=write\nbs=4k\nsize=1m\nwrite_mode=verify\n");
        assert!(all.iter().all(|r| r.op == IoOp::Read));
        let e = FioJobFile::parse("[a]\nwrite_mode=zone_append\n".as_bytes(), "job.fio")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("job.fio:2: ") && e.contains("zonemode=zbd"),
            "{e}"
        );
        let e = FioJobFile::parse(
            "[a]\nwrite_mode=zone_append/50:write/50\nzonemode=zbd\n".as_bytes(),
            "job.fio",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("job.fio:2: bad write_mode"), "{e}");
    }
}

/// Issue 31 item 7: `write_mode=zone_append` under `zonemode=zbd` (fio's
/// uring-cmd-zoned-append.fio): the same requests as plain writes at the write pointers.
#[cfg(test)]
mod robust5_zone_append_tests {
    use crate::fio::{FioContext, FioJobFile, ZbdDevice};
    use crate::{BlockRequest, IoOp};

    const CONTEXT: FioContext = FioContext {
        device_size_bytes: 64 << 20,
        seed: 3,
    };
    const DEVICE: ZbdDevice = ZbdDevice {
        start_bytes: 0,
        zone_size_bytes: 8 << 20,
        zone_capacity_bytes: 8 << 20,
        zone_count: 8,
        max_open_zones: 0,
    };

    fn zoned_file(text: &str) -> FioJobFile {
        FioJobFile::parse(text.as_bytes(), "job.fio")
            .unwrap_or_else(|e| panic!("{e}"))
            .with_device_zones(Some(&DEVICE))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn zoned_requests(text: &str) -> Vec<BlockRequest> {
        zoned_file(text)
            .zoned_generator(&CONTEXT, None, Some(&DEVICE))
            .unwrap_or_else(|e| panic!("{e}"))
            .collect()
    }

    #[test]
    fn robust5_zone_append_writes_as_zbd_writes_do() {
        let plain = "[global]\nzonemode=zbd\nsize=2z\nbs=8k\n[w]\nrw=write\n[r]\nrw=randwrite\n";
        // write_mode before zonemode, as in fio's example: the job is checked once complete
        let append = format!("[global]\nwrite_mode=zone_append\n{}", &plain[9..]);
        let writes = zoned_requests(plain);
        assert_eq!(zoned_requests(&append), writes);
        // two jobs, each over 2 zones of 8 MiB in 8 KiB blocks: 2 x 2048 writes, nothing else
        assert_eq!(writes.len(), 2 * 2048);
        assert!(
            writes
                .iter()
                .all(|r| r.op == IoOp::Write && r.size_bytes == 8192)
        );
        let notes = zoned_file(&append).notes(&CONTEXT).unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("line 2: write_mode=zone_append")),
            "{notes:?}"
        );
    }
}

#[cfg(test)]
mod sequence_tests {
    use crate::fio::{FioContext, FioJobFile};

    #[test]
    fn sequences_repeat_or_stride_as_fio_does() {
        let context = FioContext {
            device_size_bytes: 1 << 30,
            seed: 1,
        };
        let blocks = |text: &str| -> Vec<u64> {
            FioJobFile::parse(text.as_bytes(), "job.fio")
                .unwrap_or_else(|e| panic!("{e}"))
                .generator(&context)
                .unwrap()
                .map(|r| r.offset_bytes / 4096)
                .collect()
        };
        // fio's examples/sequence-distribution.fio: 12 blocks, io_size of 6
        let base =
            "[a]\nrw=randread\nbs=4k\nsize=48k\nio_size=24k\nrandom_distribution=sequence:2,0,1\n";
        assert_eq!(blocks(base), [2, 0, 1, 2, 0, 1]);
        assert_eq!(
            blocks(&format!("{base}random_sequence_stride=1\n")),
            [2, 0, 1, 5, 3, 4]
        );
        // a block past the region ends the job (fio's out-of-bounds offset)
        let past = "[a]\nrw=randread\nbs=4k\nsize=16k\nio_size=32k\nrandom_distribution=sequence:1,0\nrandom_sequence_stride=1\n";
        assert_eq!(blocks(past), [1, 0, 3, 2]);
    }
}

#[cfg(test)]
mod nrfiles_tests {
    use crate::fio::{FioContext, FioJobFile};

    #[test]
    fn files_split_the_region_and_take_turns() {
        let context = FioContext {
            device_size_bytes: 1 << 30,
            seed: 1,
        };
        let run = |text: &str| -> Vec<u64> {
            FioJobFile::parse(text.as_bytes(), "job.fio")
                .unwrap_or_else(|e| panic!("{e}"))
                .generator(&context)
                .unwrap()
                .map(|r| r.offset_bytes / 4096)
                .collect()
        };
        // fio's examples/gfapi.fio: 4 files of 16k, sequential writes, one request per turn
        assert_eq!(
            run("[a]\nrw=write\nnrfiles=4\nfilesize=16k\nsize=64k\n"),
            [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]
        );
        // random: each request lands in the file of its turn
        let blocks = run("[a]\nrw=randwrite\nnr_files=8\nsize=8m\n");
        assert_eq!(blocks.len(), 2048);
        for (i, block) in blocks.iter().enumerate() {
            assert_eq!(block / 256, i as u64 % 8, "request {i} at block {block}");
        }
        let e = FioJobFile::parse("[a]\nfilename=f\nnrfiles=2\n".as_bytes(), "job.fio")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("job.fio:3: nrfiles with filename"), "{e}");
    }
}

#[cfg(test)]
mod trimwrite_tests {
    use crate::IoOp;
    use crate::fio::{FioContext, FioJobFile};

    #[test]
    fn trimwrite_trims_each_block_then_writes_it() {
        let context = FioContext {
            device_size_bytes: 1 << 30,
            seed: 1,
        };
        let run: Vec<_> =
            FioJobFile::parse("[a]\nrw=trimwrite\nbs=4k\nsize=32k\n".as_bytes(), "j.fio")
                .unwrap()
                .generator(&context)
                .unwrap()
                .collect();
        // fio counts the writes' bytes: 8 writes, each after the trim of its block
        assert_eq!(run.len(), 16);
        for (i, pair) in run.chunks(2).enumerate() {
            assert_eq!((pair[0].op, pair[1].op), (IoOp::Trim, IoOp::Write));
            assert_eq!(pair[0].offset_bytes, i as u64 * 4096);
            assert_eq!(pair[1].offset_bytes, pair[0].offset_bytes);
        }
    }
}

#[cfg(test)]
mod limit_tests {
    use crate::fio::{FioContext, FioJobFile};

    #[test]
    fn backlogs_and_files_are_bounded_with_errors_naming_the_line() {
        let context = FioContext {
            device_size_bytes: 1 << 30,
            seed: 1,
        };
        let error = |text: &str| {
            FioJobFile::parse(text.as_bytes(), "j.fio")
                .and_then(|f| f.generator(&context).map(|_| ()))
                .unwrap_err()
                .to_string()
        };
        let e = error("[a]\nrw=write\nverify=md5\nverify_backlog=65536\nnumjobs=32\n");
        assert!(
            e.starts_with("j.fio:4: verify_backlog x numjobs holds 2097152"),
            "{e}"
        );
        let e = error("[a]\nrw=write\nverify_backlog=65537\n");
        assert!(e.starts_with("j.fio:3: verify_backlog 65537"), "{e}");
        let e = error("[a]\nrw=randwrite\nsize=64k\nblockalign=64k\nnrfiles=2\n");
        assert!(e.starts_with("j.fio:5: 2 files of 32768 bytes"), "{e}");
    }
}
