//! How the join touches PCM, for the thesis's two architectures (§5.2):
//!
//! - **PCM as main memory** ([`Mode::MainMemory`]): the CPU reads PCM lines in place and writes
//!   each item (a tuple, a tuple id) where it belongs; stores reach PCM as write-backs of the
//!   last [`WRITE_BACK_LINES`] lines written ([`LineWriter`]: a line is written when evicted or
//!   at the end of a phase, and data-comparison write programs only its changed words, as in
//!   Chen et al.'s model of cache-line write-backs). A read charges the
//!   lines it touches that are not among the last [`LINE_BUFFER_LINES`] lines read (stream
//!   buffers: a sequential scan reads each line once even while another stream is read between
//!   its items; not a model of the CPU cache).
//! - **PCM as storage** ([`Mode::Storage`]): data is copied into a DRAM buffer of
//!   `buffer_bytes` before it is processed, page by page: a read charges whole pages not in the
//!   buffer (LRU), and output goes to a DRAM page per partition that is written to PCM when full.
//!
//! Either way every byte comes from the device (`peek`, after charging), so what a join reads is
//! what was written.

use crate::error::{JoinResult, argument};
use nandlab_pcm::{PcmAddr, PcmDevice};
use std::collections::{BTreeMap, HashMap};

/// Where the join runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Mode {
    /// PCM is storage: pages are copied to a DRAM buffer of `buffer_bytes`.
    Storage {
        /// DRAM buffer for pages read from PCM, bytes (at least one page).
        buffer_bytes: u64,
    },
    /// PCM is main memory: accessed in place, line by line.
    MainMemory,
}

impl Mode {
    /// A short label (`storage`, `main-memory`).
    pub fn label(&self) -> &'static str {
        match self {
            Mode::Storage { .. } => "storage",
            Mode::MainMemory => "main-memory",
        }
    }
}

/// Lines the main-memory reader remembers (see the module note).
pub const LINE_BUFFER_LINES: usize = 16;

/// Dirty lines the main-memory writer holds before writing one back.
pub const WRITE_BACK_LINES: usize = 64;

/// Page size of the storage architecture and of partition pages, bytes.
pub const PAGE_BYTES: u64 = 4_096;

/// Charges reads according to the [`Mode`].
#[derive(Debug)]
pub struct Reader {
    mode: Mode,
    line_bytes: u64,
    /// Main-memory mode: the lines read last, most recent at the end.
    recent_lines: Vec<u64>,
    /// Storage mode: resident page → last use; and last use → page, for LRU eviction.
    resident: HashMap<u64, u64>,
    by_use: BTreeMap<u64, u64>,
    pages_max: usize,
    clock: u64,
}

impl Reader {
    /// A reader with an empty buffer.
    pub fn new(mode: Mode, device: &PcmDevice) -> JoinResult<Self> {
        let pages_max = match mode {
            Mode::Storage { buffer_bytes } if buffer_bytes < PAGE_BYTES => {
                return Err(argument(
                    "buffer_bytes",
                    format!("{buffer_bytes} is smaller than one {PAGE_BYTES} B page"),
                ));
            }
            Mode::Storage { buffer_bytes } => (buffer_bytes / PAGE_BYTES) as usize,
            Mode::MainMemory => 0,
        };
        Ok(Reader {
            mode,
            line_bytes: device.config().geometry.line_size_bytes,
            recent_lines: Vec::with_capacity(LINE_BUFFER_LINES),
            resident: HashMap::new(),
            by_use: BTreeMap::new(),
            pages_max,
            clock: 0,
        })
    }

    /// Forgets what is buffered (a new operator starts cold).
    pub fn reset(&mut self) {
        self.recent_lines.clear();
        self.resident.clear();
        self.by_use.clear();
    }

    /// Charges a read of `len` bytes at `addr` and returns them.
    pub fn read<'d>(
        &mut self,
        device: &'d mut PcmDevice,
        addr: u64,
        len: u64,
    ) -> JoinResult<&'d [u8]> {
        device.peek(PcmAddr(addr), len)?; // range check before charging
        if len > 0 {
            match self.mode {
                Mode::MainMemory => self.charge_lines(device, addr, len)?,
                Mode::Storage { .. } => self.charge_pages(device, addr, len)?,
            }
        }
        Ok(device.peek(PcmAddr(addr), len)?)
    }

    /// Reads the little-endian `u32` at `addr`.
    pub fn read_u32(&mut self, device: &mut PcmDevice, addr: u64) -> JoinResult<u32> {
        let b = self.read(device, addr, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn charge_lines(&mut self, device: &mut PcmDevice, addr: u64, len: u64) -> JoinResult<()> {
        let first = addr / self.line_bytes;
        let last = (addr + len - 1) / self.line_bytes;
        // contiguous lines not buffered are charged as one access (their banks work in parallel)
        let mut run: Option<(u64, u64)> = None;
        for line in first..=last {
            if let Some(i) = self.recent_lines.iter().position(|&l| l == line) {
                self.recent_lines.remove(i);
                if let Some((start, n)) = run.take() {
                    device.charge_read(PcmAddr(start * self.line_bytes), n * self.line_bytes)?;
                }
            } else {
                run = Some(run.map_or((line, 1), |(start, n)| (start, n + 1)));
                if self.recent_lines.len() == LINE_BUFFER_LINES {
                    self.recent_lines.remove(0);
                }
            }
            self.recent_lines.push(line);
        }
        if let Some((start, n)) = run {
            device.charge_read(PcmAddr(start * self.line_bytes), n * self.line_bytes)?;
        }
        Ok(())
    }

    fn charge_pages(&mut self, device: &mut PcmDevice, addr: u64, len: u64) -> JoinResult<()> {
        let capacity = device.capacity_bytes();
        for page in addr / PAGE_BYTES..=(addr + len - 1) / PAGE_BYTES {
            self.clock += 1;
            if let Some(used) = self.resident.insert(page, self.clock) {
                self.by_use.remove(&used);
                self.by_use.insert(self.clock, page);
                continue;
            }
            self.by_use.insert(self.clock, page);
            if self.resident.len() > self.pages_max
                && let Some((_, victim)) = self.by_use.pop_first()
            {
                self.resident.remove(&victim);
            }
            let start = page * PAGE_BYTES;
            device.charge_read(PcmAddr(start), PAGE_BYTES.min(capacity - start))?;
        }
        Ok(())
    }
}

/// Write-back of stores in main-memory mode: the last [`WRITE_BACK_LINES`] lines written are
/// held (with their current contents) and written to PCM whole when evicted or flushed.
#[derive(Debug)]
pub struct LineWriter {
    line_bytes: u64,
    /// `(line, bytes)`, least recently written first.
    lines: Vec<(u64, Vec<u8>)>,
}

impl LineWriter {
    /// An empty writer for `device`'s lines.
    pub fn new(device: &PcmDevice) -> Self {
        LineWriter {
            line_bytes: device.config().geometry.line_size_bytes,
            lines: Vec::with_capacity(WRITE_BACK_LINES),
        }
    }

    /// Stores `bytes` at `addr` (reaches PCM at the line's write-back).
    pub fn write(&mut self, device: &mut PcmDevice, addr: u64, bytes: &[u8]) -> JoinResult<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        device.peek(PcmAddr(addr), bytes.len() as u64)?;
        let mut at = addr;
        let mut rest = bytes;
        while !rest.is_empty() {
            let line = at / self.line_bytes;
            let offset = (at - line * self.line_bytes) as usize;
            let n = rest.len().min(self.line_bytes as usize - offset);
            let i = match self.lines.iter().position(|(l, _)| *l == line) {
                Some(i) => i,
                None => {
                    if self.lines.len() == WRITE_BACK_LINES {
                        let (old, data) = self.lines.remove(0);
                        device.write(PcmAddr(old * self.line_bytes), &data)?;
                    }
                    let current = device.peek(PcmAddr(line * self.line_bytes), self.line_bytes)?;
                    self.lines.push((line, current.to_vec()));
                    self.lines.len() - 1
                }
            };
            let mut entry = self.lines.remove(i);
            entry.1[offset..offset + n].copy_from_slice(&rest[..n]);
            self.lines.push(entry);
            at += n as u64;
            rest = &rest[n..];
        }
        Ok(())
    }

    /// Writes every held line back.
    pub fn flush(&mut self, device: &mut PcmDevice) -> JoinResult<()> {
        for (line, data) in self.lines.drain(..) {
            device.write(PcmAddr(line * self.line_bytes), &data)?;
        }
        Ok(())
    }
}

/// Items appended to numbered partitions in PCM pages taken from a scratch area: a partition is
/// a chain of pages (the chain itself is DRAM metadata). Items never straddle a page.
#[derive(Debug)]
pub struct Partitions {
    item_bytes: u64,
    mode: Mode,
    next_page: u64,
    end: u64,
    pages: Vec<Vec<u64>>,
    /// Bytes used in each partition's last page.
    fill: Vec<u64>,
    /// Storage mode: the DRAM page of each partition.
    buffers: Vec<Vec<u8>>,
    items: Vec<u64>,
    /// Main-memory mode: the write-back of the appends.
    lines: Option<LineWriter>,
}

impl Partitions {
    /// `count` empty partitions of `item_bytes` items in the scratch area `start..end`.
    pub fn new(
        device: &PcmDevice,
        count: u32,
        item_bytes: u64,
        mode: Mode,
        start: u64,
        end: u64,
    ) -> JoinResult<Self> {
        if count == 0 {
            return Err(argument("partitions", "must be at least 1"));
        }
        if item_bytes == 0 || item_bytes > PAGE_BYTES {
            return Err(argument(
                "item_bytes",
                format!("{item_bytes} is not in 1..={PAGE_BYTES}"),
            ));
        }
        let n = count as usize;
        Ok(Partitions {
            item_bytes,
            mode,
            next_page: start.div_ceil(PAGE_BYTES) * PAGE_BYTES,
            end,
            pages: vec![Vec::new(); n],
            fill: vec![PAGE_BYTES; n],
            buffers: vec![Vec::new(); n],
            items: vec![0; n],
            lines: (mode == Mode::MainMemory).then(|| LineWriter::new(device)),
        })
    }

    /// Appends one item (its `item_bytes` bytes) to partition `p`.
    pub fn append(&mut self, device: &mut PcmDevice, p: usize, item: &[u8]) -> JoinResult<()> {
        debug_assert_eq!(item.len() as u64, self.item_bytes);
        if self.fill[p] + self.item_bytes > PAGE_BYTES {
            self.flush(device, p)?;
            if self.next_page + PAGE_BYTES > self.end {
                return Err(argument(
                    "capacity_bytes",
                    "the PCM scratch area is too small for the partitions",
                ));
            }
            self.pages[p].push(self.next_page);
            self.next_page += PAGE_BYTES;
            self.fill[p] = 0;
        }
        let page = *self.pages[p].last().unwrap_or(&0);
        match self.mode {
            Mode::MainMemory => {
                if let Some(lines) = &mut self.lines {
                    lines.write(device, page + self.fill[p], item)?;
                }
            }
            Mode::Storage { .. } => self.buffers[p].extend_from_slice(item),
        }
        self.fill[p] += self.item_bytes;
        self.items[p] += 1;
        Ok(())
    }

    /// Writes partition `p`'s DRAM page to PCM (storage mode; nothing in main-memory mode).
    fn flush(&mut self, device: &mut PcmDevice, p: usize) -> JoinResult<()> {
        if let (Some(&page), false) = (self.pages[p].last(), self.buffers[p].is_empty()) {
            device.write(PcmAddr(page), &self.buffers[p])?;
            self.buffers[p].clear();
        }
        Ok(())
    }

    /// Writes every DRAM page or dirty line still held (end of the partition phase).
    pub fn finish(&mut self, device: &mut PcmDevice) -> JoinResult<()> {
        for p in 0..self.pages.len() {
            self.flush(device, p)?;
        }
        if let Some(lines) = &mut self.lines {
            lines.flush(device)?;
        }
        Ok(())
    }

    /// The PCM addresses of partition `p`'s items, in append order.
    pub fn item_addresses(&self, p: usize) -> impl Iterator<Item = u64> + '_ {
        let per_page = PAGE_BYTES / self.item_bytes;
        let items = self.items[p];
        let item_bytes = self.item_bytes;
        self.pages[p]
            .iter()
            .enumerate()
            .flat_map(move |(i, &page)| {
                let before = i as u64 * per_page;
                let here = items.saturating_sub(before).min(per_page);
                (0..here).map(move |k| page + k * item_bytes)
            })
    }

    /// Bytes of one item.
    pub fn item_bytes(&self) -> u64 {
        self.item_bytes
    }

    /// Items in partition `p`.
    pub fn len(&self, p: usize) -> u64 {
        self.items[p]
    }

    /// Whether every partition is empty.
    pub fn is_empty(&self) -> bool {
        self.items.iter().all(|&n| n == 0)
    }

    /// The end of the scratch pages used so far.
    pub fn scratch_end(&self) -> u64 {
        self.next_page
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> PcmDevice {
        let mut c = nandlab_pcm::preset("cidr11").unwrap();
        c.geometry.capacity_bytes = 1 << 20;
        PcmDevice::new(c, 1).unwrap()
    }

    #[test]
    fn write_back_coalesces_stores_into_one_word_write() {
        let mut d = device();
        let mut w = LineWriter::new(&d);
        w.write(&mut d, 64, &1u32.to_le_bytes()).unwrap();
        w.write(&mut d, 68, &2u32.to_le_bytes()).unwrap();
        assert_eq!(d.stats().words_written, 0);
        w.flush(&mut d).unwrap();
        assert_eq!(d.stats().words_written, 1);
        assert_eq!(d.peek(PcmAddr(64), 8).unwrap(), &[1, 0, 0, 0, 2, 0, 0, 0]);
    }

    #[test]
    fn main_memory_reads_charge_each_line_once_while_buffered() {
        let mut d = device();
        let mut r = Reader::new(Mode::MainMemory, &d).unwrap();
        for i in 0..16 {
            r.read(&mut d, i * 4, 4).unwrap(); // one line
        }
        r.read(&mut d, 60, 8).unwrap(); // spills into the next line
        assert_eq!(d.stats().lines_read, 2);
    }

    #[test]
    fn storage_reads_charge_whole_pages_and_evict_least_recent() {
        let mut d = device();
        let mut r = Reader::new(
            Mode::Storage {
                buffer_bytes: 2 * PAGE_BYTES,
            },
            &d,
        )
        .unwrap();
        r.read(&mut d, 0, 4).unwrap();
        r.read(&mut d, PAGE_BYTES, 4).unwrap();
        r.read(&mut d, 8, 4).unwrap(); // hit
        r.read(&mut d, 2 * PAGE_BYTES, 4).unwrap(); // evicts page 1
        r.read(&mut d, PAGE_BYTES, 4).unwrap(); // miss again
        assert_eq!(d.stats().lines_read, 4 * PAGE_BYTES / 64);
        assert!(Reader::new(Mode::Storage { buffer_bytes: 10 }, &d).is_err());
        let beyond = r.read(&mut d, 1 << 20, 4).unwrap_err().to_string();
        assert!(beyond.contains("addr"), "{beyond}");
    }
}
