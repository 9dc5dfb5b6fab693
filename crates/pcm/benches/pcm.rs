//! Simulator speed of the PCM layer (not asserted anywhere): `cargo bench -p nandlab-pcm`.

use nandlab_core::{EventSource, SimRng, SimTime};
use nandlab_pcm::{
    DedupConfig, FlashPages, FlashShape, FlashWork, Location, LogBuffer, LogRegionConfig, PageNo,
    PcmAddr, PcmDevice, PcmLogRegion, RedundantWriteFinder, WriteOutcome, preset,
};

fn main() {
    divan::main();
}

const PCM_BYTES: u64 = 16 << 20;

fn device() -> PcmDevice {
    let mut c = preset("cidr11").unwrap();
    c.geometry.capacity_bytes = PCM_BYTES;
    PcmDevice::new(c, 1).unwrap()
}

/// 8-byte writes at random word addresses through the synchronous API.
#[divan::bench]
fn word_writes(bencher: divan::Bencher) {
    const WRITES: u64 = 100_000;
    bencher
        .counter(divan::counter::ItemsCount::new(WRITES))
        .with_inputs(device)
        .bench_local_values(|mut dev| {
            let mut rng = SimRng::seed_from_u64(1);
            for i in 0..WRITES {
                let addr = PcmAddr(rng.below(PCM_BYTES / 8) * 8);
                dev.write(addr, &i.to_le_bytes()).unwrap();
            }
            dev
        });
}

/// 64-byte reads submitted at 10 ns intervals and completed through the event source.
#[divan::bench]
fn event_source_reads(bencher: divan::Bencher) {
    const READS: u64 = 100_000;
    bencher
        .counter(divan::counter::ItemsCount::new(READS))
        .with_inputs(device)
        .bench_local_values(|mut dev| {
            let mut done = Vec::with_capacity(64);
            for i in 0..READS {
                let now = SimTime::from_ns(i * 10);
                while dev.next_event_time().is_some_and(|t| t <= now) {
                    dev.process_next(&mut done);
                }
                done.clear();
                dev.submit_charge_read(now, i, PcmAddr((i * 64) % PCM_BYTES), 64)
                    .unwrap();
            }
            while dev.process_next(&mut done).is_some() {}
            dev
        });
}

const PAGE: usize = 4096;
const SHAPE: FlashShape = FlashShape {
    page_size_bytes: PAGE as u32,
    pages_per_block: 64,
    pages: 4096,
};

struct Flash(Vec<u8>);
impl FlashPages for Flash {
    fn page(&self, page: PageNo) -> Option<&[u8]> {
        let p = page.0 as usize;
        Some(&self.0[p * PAGE..(p + 1) * PAGE])
    }
}

/// Whole-page writes (a small change or a duplicate of an earlier page) through dedup and then
/// the PCM log region: the front end of R-P1.
#[divan::bench]
fn page_writes_through_dedup_and_log(bencher: divan::Bencher) {
    const WRITES: u64 = 20_000;
    bencher
        .counter(divan::counter::ItemsCount::new(WRITES))
        .with_inputs(|| {
            let dev = device();
            let dedup = DedupConfig {
                segments: 16,
                store_size_bytes: 2 << 20,
                bucket_size_bytes: 4096,
                search: Default::default(),
                hash_latency_ns: 0.0,
                hash_energy_nj: 0.0,
            };
            let finder = RedundantWriteFinder::new(dedup, PcmAddr(0), 1 << 16, &dev).unwrap();
            let log = LogRegionConfig::thesis(8 << 20);
            let log = PcmLogRegion::new(log, SHAPE, PcmAddr(4 << 20), &dev).unwrap();
            let flash = Flash(vec![0x5a; SHAPE.pages as usize * PAGE]);
            (dev, finder, log, flash)
        })
        .bench_local_values(|(mut dev, mut finder, mut log, mut flash)| {
            let mut rng = SimRng::seed_from_u64(2);
            let mut work = FlashWork::default();
            let mut page = vec![0u8; PAGE];
            for i in 0..WRITES {
                let lpa = rng.below(u64::from(SHAPE.pages)) as usize;
                page.copy_from_slice(&flash.0[lpa * PAGE..(lpa + 1) * PAGE]);
                let at = rng.below((PAGE - 64) as u64) as usize;
                page[at..at + 8].copy_from_slice(&i.to_le_bytes());
                let l = finder.lookup(&mut dev, &page).unwrap();
                if l.existing.is_some() {
                    continue;
                }
                let r = log
                    .write(&mut dev, PageNo(lpa as u32), 0, &page, &flash, &mut work)
                    .unwrap();
                for (p, bytes) in work.writes() {
                    let p = p.0 as usize;
                    flash.0[p * PAGE..(p + 1) * PAGE].copy_from_slice(bytes);
                }
                work.clear();
                if r.outcome == WriteOutcome::ToFlash {
                    flash.0[lpa * PAGE..(lpa + 1) * PAGE].copy_from_slice(&page);
                }
                finder
                    .insert(&mut dev, l.fingerprint, Location(lpa as u32))
                    .unwrap();
            }
            (dev, finder, log, flash)
        });
}
