//! The first pass of a replay: which logical pages the request stream reads before it writes
//! them (its read footprint, which a real SSD study preconditions, as MQSim does), and how far
//! into the address space it reaches (to size the device to a trace). Streaming, in bounded
//! memory: two bits per logical page of the device.

use nandlab_core::{BlockRequest, IoOp};
use nandlab_workload::WorkloadError;

/// Pages read before written, found by [`Footprint::scan`].
#[derive(Debug)]
pub struct Footprint {
    page_size_bytes: u64,
    logical_pages: u64,
    /// Pages the stream wrote or trimmed so far (it defines their state itself).
    defined: Vec<u64>,
    /// Pages read while not yet defined: the ones to precondition.
    read_first: Vec<u64>,
    read_first_count: u64,
}

impl Footprint {
    /// An empty footprint over `logical_pages` pages of `page_size_bytes`.
    pub fn new(logical_pages: u64, page_size_bytes: u32) -> Self {
        let words = usize::try_from(logical_pages.div_ceil(64)).unwrap_or(usize::MAX);
        Footprint {
            page_size_bytes: u64::from(page_size_bytes),
            logical_pages,
            defined: vec![0; words],
            read_first: vec![0; words],
            read_first_count: 0,
        }
    }

    /// Adds every request of `requests` (already folded into the logical capacity); the
    /// first error of the stream ends the scan with it.
    pub fn scan<I>(&mut self, requests: I) -> Result<(), WorkloadError>
    where
        I: Iterator<Item = Result<BlockRequest, WorkloadError>>,
    {
        for request in requests {
            self.add(&request?);
        }
        Ok(())
    }

    /// Adds one request (pages beyond the logical capacity are ignored).
    pub fn add(&mut self, r: &BlockRequest) {
        if r.size_bytes == 0 {
            return;
        }
        let first = r.offset_bytes / self.page_size_bytes;
        let last = ((r.offset_bytes + r.size_bytes - 1) / self.page_size_bytes)
            .min(self.logical_pages.saturating_sub(1));
        for page in first..=last {
            let (word, bit) = ((page / 64) as usize, 1u64 << (page % 64));
            if self.defined[word] & bit != 0 {
                continue;
            }
            match r.op {
                IoOp::Read => {
                    if self.read_first[word] & bit == 0 {
                        self.read_first[word] |= bit;
                        self.read_first_count += 1;
                    }
                }
                IoOp::Write | IoOp::Trim => self.defined[word] |= bit,
            }
        }
    }

    /// How many pages are read before they are written.
    pub fn read_first_pages(&self) -> u64 {
        self.read_first_count
    }

    /// The pages read before written, in ascending order.
    pub fn read_first(&self) -> impl Iterator<Item = u64> + '_ {
        self.read_first
            .iter()
            .enumerate()
            .flat_map(|(word, &bits)| {
                (0..64u64)
                    .filter(move |b| bits & (1 << b) != 0)
                    .map(move |b| word as u64 * 64 + b)
            })
    }
}

/// The end (exclusive, in bytes) of the furthest request of `requests`.
pub fn furthest_byte<I>(requests: I) -> Result<u64, WorkloadError>
where
    I: Iterator<Item = Result<BlockRequest, WorkloadError>>,
{
    let mut end = 0u64;
    for request in requests {
        let r = request?;
        end = end.max(r.offset_bytes.saturating_add(r.size_bytes));
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(op: IoOp, offset_bytes: u64, size_bytes: u64) -> BlockRequest {
        BlockRequest {
            arrival: None,
            op,
            offset_bytes,
            size_bytes,
            placement_id: 0,
        }
    }

    #[test]
    fn pages_read_before_written_are_found_once_in_order() {
        let mut f = Footprint::new(200, 4096);
        f.add(&request(IoOp::Write, 0, 8192)); // pages 0, 1
        f.add(&request(IoOp::Read, 4096, 8192)); // 1 written, 2 read first
        f.add(&request(IoOp::Trim, 130 * 4096, 4096)); // 130 defined by the trim
        f.add(&request(IoOp::Read, 129 * 4096 + 100, 4096)); // 129, 130
        f.add(&request(IoOp::Read, 2 * 4096, 1)); // 2 again: counted once
        f.add(&request(IoOp::Write, 2 * 4096, 4096)); // a later write changes nothing
        assert_eq!(f.read_first_pages(), 2);
        assert_eq!(f.read_first().collect::<Vec<_>>(), vec![2, 129]);
    }

    #[test]
    fn the_last_page_of_the_device_is_kept_in_range() {
        let mut f = Footprint::new(65, 512);
        f.add(&request(IoOp::Read, 64 * 512, 4096));
        assert_eq!(f.read_first().collect::<Vec<_>>(), vec![64]);
    }

    #[test]
    fn furthest_byte_is_the_end_of_the_furthest_request() {
        let requests = [request(IoOp::Read, 100, 10), request(IoOp::Write, 0, 4096)];
        assert_eq!(furthest_byte(requests.into_iter().map(Ok)).unwrap(), 4096);
    }
}
