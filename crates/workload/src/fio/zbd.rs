//! The zone state of `zonemode=zbd` (fio's `zbd.c`, see `zoned.rs`) and the rotation of
//! placement-id lists, applied to each stream's requests.

use super::FioJobFile;
use super::stream::FioStream;
use super::zoned::ZbdDevice;
use crate::{BlockRequest, IoOp};

/// A stream's part of the zoned state.
#[derive(Clone, Debug)]
struct StreamZones {
    zbd: bool,
    random: bool,
    min_bs: u64,
    /// Zones of the stream's region `[first, end)` (namespace zone indices).
    first: u64,
    end: u64,
    io_size: u64,
    threshold: f64,
    frequency: f64,
    job_max_open: u32,
    read_beyond_wp: bool,
    /// Zones this stream holds in the write set (fio's `td->num_write_zones`).
    open: u32,
    plis: Vec<u16>,
    pli_random: bool,
    pli_next: usize,
    rng: u64,
}

/// The zones of the device as fio tracks them.
#[derive(Clone, Debug)]
struct Device {
    geo: ZbdDevice,
    /// Bytes written in each zone (write pointer minus zone start).
    wp: Vec<u64>,
    /// The stream holding each zone in the write set.
    holder: Vec<Option<u32>>,
    /// The write set (fio's `write_zones`), in the order zones joined it.
    write_zones: Vec<u64>,
    max_write_zones: u32,
    /// Bytes below the write pointers (fio's `wp_valid_data_bytes`).
    valid: u64,
    /// Writes until the next reset by `zone_reset_frequency`.
    write_cnt: u64,
}

/// Zone-aware rewriting of each stream's requests (see the module documentation).
#[derive(Clone, Debug)]
pub struct ZoneHost {
    device: Option<Device>,
    streams: Vec<StreamZones>,
}

fn xorshift(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    x
}

impl ZoneHost {
    /// The zoned state of `streams` (from `file` on `device`), or `None` when no job needs it
    /// (no `zonemode=zbd`, no list of placement ids): the requests are then untouched.
    pub(crate) fn new(
        file: &FioJobFile,
        streams: &[FioStream],
        device: Option<&ZbdDevice>,
    ) -> Option<ZoneHost> {
        let zbd = file.zoned() && device.is_some();
        if !zbd && file.jobs.iter().all(|j| j.zoned.plis.len() < 2) {
            return None;
        }
        let mut per_stream = Vec::with_capacity(streams.len());
        let mut jobs = file
            .jobs
            .iter()
            .flat_map(|j| std::iter::repeat_n(j, j.numjobs as usize));
        for stream in streams {
            let job = jobs.next().expect("a job per stream");
            let (mut first, mut end) = (0, 0);
            if let Some(d) = device {
                let zs = d.zone_size_bytes;
                let start = stream.spec.offset_bytes.saturating_sub(d.start_bytes);
                let stop = (stream.spec.offset_bytes + stream.spec.span_bytes)
                    .saturating_sub(d.start_bytes);
                first = start.div_ceil(zs).min(d.zone_count);
                end = (stop / zs).min(d.zone_count).max(first);
            }
            per_stream.push(StreamZones {
                zbd: job.zoned.zbd && device.is_some(),
                random: job.rw.is_random(),
                min_bs: job.block_size_bytes,
                first,
                end,
                io_size: (end - first) * device.map_or(0, |d| d.zone_size_bytes),
                threshold: job.zoned.reset_threshold,
                frequency: job.zoned.reset_frequency,
                job_max_open: job.zoned.job_max_open_zones,
                read_beyond_wp: job.zoned.read_beyond_wp,
                open: 0,
                plis: job.zoned.plis.clone(),
                pli_random: job.zoned.pli_random,
                pli_next: 0,
                rng: stream.spec.seed ^ 0x9e37_79b9_7f4a_7c15 | 1,
            });
        }
        let device = device.filter(|_| zbd).map(|d| {
            let job = file.jobs.iter().find(|j| j.zoned.zbd).expect("a zbd job");
            let user = job.zoned.max_open_zones;
            let max_write_zones = if job.zoned.ignore_zone_limits || d.max_open_zones == 0 {
                user
            } else if user == 0 {
                d.max_open_zones
            } else {
                user.min(d.max_open_zones)
            };
            let frequency = job.zoned.reset_frequency;
            Device {
                geo: *d,
                wp: vec![0; d.zone_count as usize],
                holder: vec![None; d.zone_count as usize],
                write_zones: Vec::new(),
                max_write_zones,
                valid: 0,
                write_cnt: reset_count(frequency),
            }
        });
        Some(ZoneHost {
            device,
            streams: per_stream,
        })
    }

    /// `request` of stream `stream` as fio issues it, or `None` when the stream ends there.
    pub(crate) fn adjust(
        &mut self,
        stream: usize,
        mut request: BlockRequest,
    ) -> Option<BlockRequest> {
        let s = &mut self.streams[stream];
        if request.op == IoOp::Write && s.plis.len() > 1 {
            let i = if s.pli_random {
                (xorshift(&mut s.rng) % s.plis.len() as u64) as usize
            } else {
                let i = s.pli_next;
                s.pli_next = (i + 1) % s.plis.len();
                i
            };
            request.placement_id = s.plis[i];
        }
        if !s.zbd || s.first == s.end {
            return if s.zbd { None } else { Some(request) };
        }
        let d = self.device.as_mut().expect("zbd streams have a device");
        let zs = d.geo.zone_size_bytes;
        let Some(rel) = request.offset_bytes.checked_sub(d.geo.start_bytes) else {
            return Some(request);
        };
        let zone = rel / zs;
        if zone >= d.geo.zone_count {
            return Some(request);
        }
        let zone = zone.clamp(s.first, s.end - 1);
        match request.op {
            IoOp::Write => d.write(stream, &mut self.streams, zone, request),
            IoOp::Read => d.read(&self.streams[stream], zone, request),
            IoOp::Trim => d.trim(stream, &mut self.streams, zone, request),
        }
    }
}

fn reset_count(frequency: f64) -> u64 {
    if frequency > 0.0 {
        (1.0 / frequency).min(f64::from(u32::MAX)) as u64
    } else {
        u64::from(u32::MAX)
    }
}

impl Device {
    fn start_of(&self, zone: u64) -> u64 {
        self.geo.start_bytes + zone * self.geo.zone_size_bytes
    }

    fn remainder(&self, zone: u64) -> u64 {
        self.geo.zone_capacity_bytes - self.wp[zone as usize]
    }

    /// fio's `zbd_write_zone_get`: whether `zone` is (or could join) the write set.
    fn write_zone_get(&mut self, streams: &mut [StreamZones], stream: usize, zone: u64) -> bool {
        if self.max_write_zones == 0 {
            return true;
        }
        if self.holder[zone as usize].is_some() {
            return self.remainder(zone) > 0;
        }
        let s = &mut streams[stream];
        if s.job_max_open > 0 && s.open >= s.job_max_open {
            return false;
        }
        if self.write_zones.len() as u32 >= self.max_write_zones {
            return false;
        }
        self.write_zones.push(zone);
        self.holder[zone as usize] = Some(stream as u32);
        s.open += 1;
        true
    }

    /// fio's `zbd_write_zone_put`: `zone` leaves the write set.
    fn write_zone_put(&mut self, streams: &mut [StreamZones], zone: u64) {
        if let Some(holder) = self.holder[zone as usize].take() {
            self.write_zones.retain(|&z| z != zone);
            let s = &mut streams[holder as usize];
            s.open = s.open.saturating_sub(1);
        }
    }

    /// fio's `zbd_pick_write_zone`: a zone of the write set in the stream's region, starting
    /// from one chosen by the request's offset.
    fn pick_write_zone(&self, s: &StreamZones, offset: u64) -> Option<u64> {
        let n = self.write_zones.len() as u64;
        if n == 0 || s.io_size == 0 {
            return None;
        }
        let from = offset.saturating_sub(self.start_of(s.first)) * n / s.io_size;
        (0..n)
            .map(|i| self.write_zones[((from + i) % n) as usize])
            .find(|&z| s.first <= z && z < s.end)
    }

    /// fio's `zbd_convert_to_write_zone` (without waiting for writes in flight).
    fn convert(
        &mut self,
        streams: &mut [StreamZones],
        stream: usize,
        zb: u64,
        offset: u64,
    ) -> Option<u64> {
        if self.write_zone_get(streams, stream, zb) {
            return Some(zb);
        }
        let s = &streams[stream];
        let limited = self.max_write_zones > 0 || s.job_max_open > 0;
        if limited
            && let Some(z) = self.pick_write_zone(s, offset)
            && self.remainder(z) >= s.min_bs
        {
            return Some(z);
        }
        let (first, end, random, min_bs) = (s.first, s.end, s.random, s.min_bs);
        if random && self.write_zone_get(streams, stream, zb) {
            return Some(zb);
        }
        let mut z = zb;
        for _ in first..end {
            z = if z + 1 >= end { first } else { z + 1 };
            if self.holder[z as usize].is_some() {
                continue;
            }
            if self.write_zone_get(streams, stream, z) {
                return Some(z);
            }
        }
        let open: Vec<u64> = self.write_zones.clone();
        for z in open.into_iter().filter(|&z| first <= z && z < end) {
            if self.remainder(z) >= min_bs && self.write_zone_get(streams, stream, z) {
                return Some(z);
            }
        }
        if random && let Some(z) = self.pick_write_zone(&streams[stream], offset) {
            // every write zone is too full for a block: finish one and write it again
            self.valid += self.remainder(z);
            self.wp[z as usize] = self.geo.zone_capacity_bytes;
            self.write_zone_put(streams, z);
            return Some(z);
        }
        None
    }

    fn reset(&mut self, zone: u64) {
        self.valid -= self.wp[zone as usize];
        self.wp[zone as usize] = 0;
    }

    fn write(
        &mut self,
        stream: usize,
        streams: &mut [StreamZones],
        zone: u64,
        mut request: BlockRequest,
    ) -> Option<BlockRequest> {
        let offset = request.offset_bytes;
        let z = self.convert(streams, stream, zone, offset)?;
        let s = &streams[stream];
        let mut reset = false;
        if s.frequency > 0.0 && self.valid as f64 >= s.io_size as f64 * s.threshold {
            self.write_cnt -= 1;
            if self.write_cnt == 0 {
                self.write_cnt = reset_count(s.frequency);
                reset = true;
            }
        }
        let min_bs = s.min_bs;
        if reset || self.remainder(z) < min_bs {
            self.reset(z);
        }
        request.offset_bytes = self.start_of(z) + self.wp[z as usize];
        let len = request.size_bytes.min(self.remainder(z)) / min_bs * min_bs;
        if len == 0 {
            return None;
        }
        request.size_bytes = len;
        self.wp[z as usize] += len;
        self.valid += len;
        if self.remainder(z) == 0 {
            self.write_zone_put(streams, z);
        }
        Some(request)
    }

    /// fio's `zbd_find_zone`: the nearest zone after `zone` (for random jobs also before it)
    /// with at least `min` written bytes.
    fn find_zone(&self, s: &StreamZones, zone: u64, min: u64) -> Option<u64> {
        let has = |z: u64| self.wp[z as usize] >= min;
        for step in 1..(s.end - s.first).max(1) {
            if zone + step < s.end && has(zone + step) {
                return Some(zone + step);
            }
            if s.random && zone >= s.first + step && has(zone - step) {
                return Some(zone - step);
            }
        }
        None
    }

    fn read(&self, s: &StreamZones, zone: u64, mut request: BlockRequest) -> Option<BlockRequest> {
        if s.read_beyond_wp {
            return Some(request);
        }
        let orig_start = self.start_of(zone);
        let mut zb = zone;
        let mut range = self.wp[zb as usize];
        if range < s.min_bs || (!s.random && request.offset_bytes + s.min_bs > orig_start + range) {
            zb = self.find_zone(s, zone, s.min_bs)?;
            range = self.wp[zb as usize];
            if !s.random {
                request.offset_bytes = self.start_of(zb);
            }
        }
        let start = self.start_of(zb);
        if range <= request.size_bytes {
            request.offset_bytes = start;
        } else if s.random {
            request.offset_bytes = start
                + (request.offset_bytes - orig_start) % (range - request.size_bytes) / s.min_bs
                    * s.min_bs;
        }
        let len = request
            .size_bytes
            .min((start + range).saturating_sub(request.offset_bytes))
            / s.min_bs
            * s.min_bs;
        if len == 0 {
            return None;
        }
        request.size_bytes = len;
        Some(request)
    }

    fn trim(
        &mut self,
        stream: usize,
        streams: &mut [StreamZones],
        zone: u64,
        mut request: BlockRequest,
    ) -> Option<BlockRequest> {
        let s = &streams[stream];
        let mut z = zone;
        if s.random && self.wp[z as usize] == 0 {
            z = self.find_zone(s, zone, 1)?;
            request.offset_bytes = self.start_of(z);
        }
        if request.offset_bytes != self.start_of(z) {
            // fio: "Trim offset not at zone start", the job fails
            return None;
        }
        // fio's zbd_reset_zone: the zone leaves the write set
        self.reset(z);
        self.write_zone_put(streams, z);
        request.size_bytes = self.geo.zone_size_bytes;
        Some(request)
    }
}
