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
    let share = if missing == 0 {
        0
    } else {
        (100 - given) / missing
    };
    let mut out: Vec<(u64, u32)> = entries
        .into_iter()
        .map(|(bytes, p)| (bytes, p.unwrap_or(share)))
        .collect();
    if out.iter().map(|(_, p)| p).sum::<u32>() == 0 {
        return Err(bad("no entry has a percentage above 0"));
    }
    out.sort_by(|a, b| b.1.cmp(&a.1));
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
            let share = if missing == 0 {
                0
            } else {
                (100 - given) / missing
            };
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
}

impl StreamShape {
    /// Whether the shape changes anything (else the spec's generator runs as is).
    pub fn is_plain(&self) -> bool {
        self.split.is_none() && self.seq_add == 0 && self.zones.is_none()
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
    /// fio's `last_pos[ddir]` relative to the region, per direction.
    last_pos: [u64; 3],
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
            last_pos: [0; 3],
            rng: SimRng::stream(spec.seed, "workload.fio.shape"),
            shape,
        }
    }

    pub(crate) fn next(&mut self) -> Option<BlockRequest> {
        let mut request = self.base.next()?;
        let region = self.region_bytes;
        if !self.shape.random {
            // fio's get_next_seq_offset: holes (or backwards steps) between requests
            let d = direction_index(request.op);
            let mut pos = self.last_pos[d];
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
            let size = self.size_for(request.op, pos);
            if pos + size > region {
                // the end of the region: start over from its beginning
                pos = 0;
            }
            let size = size.min(region);
            request.offset_bytes = self.region_start + pos;
            request.size_bytes = size;
            self.last_pos[d] = pos + size;
            return Some(request);
        }
        let mut pos = request.offset_bytes - self.region_start;
        if let Some(zones) = &self.shape.zones {
            let blocks = ((region.saturating_sub(self.block_bytes)) / self.align_bytes).max(0) + 1;
            pos = zones.draw(blocks, &mut self.rng) * self.align_bytes;
        }
        let size = self.size_for(request.op, pos);
        if pos + size > region {
            pos = (region - size) / self.align_bytes * self.align_bytes;
        }
        request.offset_bytes = self.region_start + pos;
        request.size_bytes = size;
        Some(request)
    }

    fn size_for(&mut self, op: IoOp, pos: u64) -> u64 {
        let region = self.region_bytes;
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
