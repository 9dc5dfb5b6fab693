use super::*;
use crate::preset::preset;
use nandlab_core::EventSource;
use proptest::prelude::*;

fn device(name: &str, edit: impl Fn(&mut PcmConfig)) -> PcmDevice {
    let mut c = preset(name).unwrap();
    c.geometry.capacity_bytes = 1 << 16;
    edit(&mut c);
    PcmDevice::new(c, 1).unwrap()
}

fn cidr() -> PcmDevice {
    device("cidr11", |_| {})
}

#[test]
fn read_costs_lines_at_the_line_latency_spread_over_banks() {
    let mut d = cidr();
    // one byte: one 64 B line, 115 ns, 512 bits at 2 pJ
    let c = d.charge_read(PcmAddr(10), 1).unwrap();
    assert_eq!(c.lines_read, 1);
    assert_eq!(c.latency, SimTime::from_ns(115));
    assert_eq!(c.energy_pj, 512.0 * 2.0);
    // a line-crossing 2-byte read touches two lines in two banks: still one line time
    let c = d.charge_read(PcmAddr(63), 2).unwrap();
    assert_eq!((c.lines_read, c.latency), (2, SimTime::from_ns(115)));
    // 4 KiB = 64 lines over 4 banks: 16 line times
    let c = d.charge_read(PcmAddr(0), 4096).unwrap();
    assert_eq!((c.lines_read, c.latency), (64, SimTime::from_ns(16 * 115)));
    // 5 lines from line 3: banks 3,0,1,2,3 -> bank 3 does two
    let c = d.charge_read(PcmAddr(3 * 64), 5 * 64).unwrap();
    assert_eq!(c.latency, SimTime::from_ns(2 * 115));
}

#[test]
fn writes_program_only_changed_words_and_bits() {
    let mut d = cidr();
    let c = d.write(PcmAddr(0), &[0xff; 16]).unwrap();
    assert_eq!((c.words_written, c.bits_programmed), (2, 128));
    assert_eq!(c.latency, SimTime::from_ns(2 * 225)); // same line, same bank
    assert_eq!(c.energy_pj, 128.0 * 16.0);
    // rewrite the same bytes: nothing programmed, nothing charged
    let c = d.write(PcmAddr(0), &[0xff; 16]).unwrap();
    assert_eq!(c, AccessCost::default());
    assert_eq!(d.stats().words_unchanged, 2);
    // change one bit in the second word
    let c = d.write(PcmAddr(8), &[0xfe]).unwrap();
    assert_eq!((c.words_written, c.bits_programmed), (1, 1));
    assert_eq!(d.word_writes(PcmAddr(0)), 1);
    assert_eq!(d.word_writes(PcmAddr(8)), 2);
    let mut out = [0u8; 17];
    d.read(PcmAddr(0), &mut out).unwrap();
    assert_eq!(&out[..8], &[0xff; 8]);
    assert_eq!(out[8], 0xfe);
    assert_eq!(&out[9..16], &[0xff; 7]);
    assert_eq!(out[16], 0);
}

#[test]
fn writes_in_different_banks_overlap() {
    let mut d = cidr();
    // one word in each of lines 0..4 (four banks): one word time
    let mut buf = vec![0u8; 256];
    for line in 0..4 {
        buf[line * 64] = 1;
    }
    let c = d.write(PcmAddr(0), &buf).unwrap();
    assert_eq!(c.words_written, 4);
    assert_eq!(c.latency, SimTime::from_ns(225));
}

#[test]
fn flip_n_write_halves_the_worst_case() {
    let mut plain = cidr();
    let mut fnw = device("cidr11", |c| c.write.flip_n_write = true);
    for d in [&mut plain, &mut fnw] {
        d.write(PcmAddr(0), &[0xff; 8]).unwrap();
        d.write(PcmAddr(0), &[0x00; 8]).unwrap();
        d.write(PcmAddr(0), &[0xff; 8]).unwrap();
    }
    assert_eq!(plain.stats().bits_programmed, 3 * 64);
    assert_eq!(fnw.stats().bits_programmed, 3); // only the flag each time
    let mut out = [0u8; 8];
    fnw.read(PcmAddr(0), &mut out).unwrap();
    assert_eq!(out, [0xff; 8]);
}

#[test]
fn lifetime_is_the_first_word_to_reach_its_endurance() {
    let mut d = device("cidr11", |c| c.endurance.writes_mean = 10.0);
    for i in 0..25u8 {
        d.write(PcmAddr(64), &[i + 1]).unwrap();
        if i % 2 == 0 {
            d.write(PcmAddr(0), &[i + 1]).unwrap();
        }
    }
    let first = d.stats().first_worn_out.unwrap();
    assert_eq!(first.address_bytes, 64);
    assert_eq!(first.limit_writes, 10);
    assert_eq!(first.device_word_writes, 10 + 5); // word 0 had 5 writes by then
    assert_eq!(d.stats().words_worn_out, 2);
    let wear = d.wear(PcmAddr(0), 128).unwrap();
    assert_eq!(
        (wear.words, wear.words_written, wear.writes_max),
        (16, 2, 25)
    );
    assert!(wear.endurance_used_max >= 2.5);
}

#[test]
fn wear_summary_measures_evenness() {
    let mut d = cidr();
    for w in 0..8u64 {
        d.write(PcmAddr(w * 8), &[1]).unwrap();
    }
    let even = d.wear(PcmAddr(0), 64).unwrap();
    assert_eq!((even.writes_cov, even.max_over_mean), (0.0, 1.0));
    for i in 0..7u8 {
        d.write(PcmAddr(0), &[i + 2]).unwrap();
    }
    let skewed = d.wear(PcmAddr(0), 64).unwrap();
    assert!(
        skewed.writes_cov > 1.0 && skewed.max_over_mean > 4.0,
        "{skewed:?}"
    );
}

#[test]
fn bad_arguments_are_errors_naming_the_argument() {
    let mut d = cidr();
    let cap = d.capacity_bytes();
    for e in [
        d.write(PcmAddr(cap - 1), &[0, 0]).unwrap_err(),
        d.charge_read(PcmAddr(u64::MAX), 2).unwrap_err(),
        d.read(PcmAddr(cap), &mut [0]).unwrap_err(),
    ] {
        assert!(e.to_string().contains("`addr`"), "{e}");
    }
    d.submit_write(SimTime::from_ns(10), 0, PcmAddr(0), &[1])
        .unwrap();
    let e = d
        .submit_write(SimTime::from_ns(5), 0, PcmAddr(0), &[1])
        .unwrap_err();
    assert!(matches!(e, PcmError::TimeWentBack { .. }), "{e}");
}

#[test]
fn a_device_too_large_for_host_memory_is_refused_naming_the_key() {
    let mut c = preset("cidr11").unwrap();
    c.geometry.capacity_bytes = crate::config::CAPACITY_BYTES_MAX;
    // 64 GiB of cells plus counters: over the default budget (half the machine's memory)
    if let Err(e) = PcmDevice::new(c, 1) {
        assert!(e.to_string().contains("geometry.capacity_bytes"), "{e}");
    }
}

#[test]
fn requests_in_flight_are_bounded() {
    let mut d = device("cidr11", |c| c.requests_in_flight_max = 2);
    d.submit_charge_read(SimTime::ZERO, 0, PcmAddr(0), 8)
        .unwrap();
    d.submit_charge_read(SimTime::ZERO, 1, PcmAddr(0), 8)
        .unwrap();
    let e = d
        .submit_charge_read(SimTime::ZERO, 2, PcmAddr(0), 8)
        .unwrap_err();
    assert!(e.to_string().contains("requests_in_flight_max"), "{e}");
}

#[test]
fn event_source_serialises_a_bank_and_overlaps_banks() {
    let mut d = cidr();
    let t0 = SimTime::from_ns(1_000);
    // two reads of line 0 (bank 0) and one of line 1 (bank 1), all at t0
    d.submit_charge_read(t0, 1, PcmAddr(0), 64).unwrap();
    d.submit_charge_read(t0, 2, PcmAddr(0), 64).unwrap();
    d.submit_charge_read(t0, 3, PcmAddr(64), 64).unwrap();
    // a write in bank 0 waits for both reads
    d.submit_write(t0, 4, PcmAddr(8), &[7]).unwrap();
    let mut done = Vec::new();
    while let Some(t) = d.process_next(&mut done) {
        assert_eq!(t, done.last().unwrap().completed);
    }
    let at: Vec<(u64, u64)> = done
        .iter()
        .map(|c| (c.tag, (c.completed - t0).as_ps() / 1_000))
        .collect();
    assert_eq!(at, vec![(1, 115), (3, 115), (2, 230), (4, 455)]);
    assert_eq!(d.stats().bank_busy[0], SimTime::from_ns(455));
    assert_eq!(d.next_event_time(), None);
    assert_eq!(d.requests_in_flight(), 0);
    // a later request on an idle device starts when submitted
    let t1 = SimTime::from_us(5);
    d.submit_charge_read(t1, 5, PcmAddr(0), 1).unwrap();
    assert_eq!(d.next_event_time(), Some(t1 + SimTime::from_ns(115)));
}

#[test]
fn event_source_reuses_its_slots() {
    let mut d = cidr();
    let mut done = Vec::with_capacity(4);
    for i in 0..1_000u64 {
        d.submit_charge_read(SimTime::from_ns(i * 1_000), i, PcmAddr(0), 64)
            .unwrap();
        d.process_next(&mut done);
        done.clear();
    }
    assert_eq!(d.slots.len(), 1);
}

#[test]
fn same_seed_same_device() {
    let run = |seed| {
        let mut c = preset("cidr11").unwrap();
        c.geometry.capacity_bytes = 4096;
        c.endurance.writes_mean = 40.0;
        c.endurance.writes_cov = 0.3;
        let mut d = PcmDevice::new(c, seed).unwrap();
        for i in 0..3_000u64 {
            let addr = PcmAddr((i * 2_654_435_761) % 4_000);
            d.write(addr, &i.to_le_bytes()[..3]).unwrap();
        }
        (d.stats().clone(), d.wear(PcmAddr(0), 4096).unwrap())
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3).0.first_worn_out, run(4).0.first_worn_out);
}

proptest! {
    /// The device is a byte array: what is written is what is read back, whatever the word
    /// alignment, with or without Flip-N-Write.
    #[test]
    fn contents_match_a_byte_array(
        fnw in any::<bool>(),
        writes in proptest::collection::vec((0u64..1000, proptest::collection::vec(any::<u8>(), 0..40)), 1..60)
    ) {
        let mut d = device("cidr11", |c| { c.geometry.capacity_bytes = 1024; c.write.flip_n_write = fnw; });
        let mut model = vec![0u8; 1024];
        for (addr, bytes) in &writes {
            let addr = (*addr).min(1024 - bytes.len() as u64);
            let before = model.clone();
            model[addr as usize..addr as usize + bytes.len()].copy_from_slice(bytes);
            let c = d.write(PcmAddr(addr), bytes).unwrap();
            // words programmed = words whose bytes changed
            let changed = (0..128).filter(|w| before[w * 8..w * 8 + 8] != model[w * 8..w * 8 + 8]).count();
            prop_assert_eq!(c.words_written, changed as u64);
        }
        let mut out = vec![0u8; 1024];
        d.read(PcmAddr(0), &mut out).unwrap();
        prop_assert_eq!(out, model);
    }

    /// Runs of whole words programmed in bulk cost exactly what the word-by-word model costs:
    /// the same cells, words written and unchanged, energy, bank latency, per-word wear
    /// counts, worn-out words and device contents, on every preset's line size, with writes
    /// that often rewrite a word unchanged (few values) and words wearing out (low endurance).
    #[test]
    fn bulk_runs_cost_exactly_the_word_by_word_writes(
        preset_index in 0usize..4,
        fnw in any::<bool>(),
        seed in 0u64..1000,
        writes in proptest::collection::vec(
            (0u64..2000, proptest::collection::vec(0u8..3, 0..300)), 1..80)
    ) {
        let name = ["cidr11", "thesis-table2.1", "thesis-table2.2", "samsung-isscc2012"][preset_index];
        let make = || {
            let mut c = preset(name).unwrap();
            c.geometry.capacity_bytes = 4096;
            c.write.flip_n_write = fnw;
            c.endurance.writes_mean = 6.0;
            c.endurance.writes_cov = 0.2;
            PcmDevice::new(c, seed).unwrap()
        };
        let (mut bulk, mut words) = (make(), make());
        for (addr, bytes) in &writes {
            let addr = (*addr).min(4096 - bytes.len() as u64);
            let a = bulk.write(PcmAddr(addr), bytes).unwrap();
            let b = words.write_word_by_word(PcmAddr(addr), bytes).unwrap();
            prop_assert_eq!(a, b);
            prop_assert_eq!(&bulk.bank_work_ps, &words.bank_work_ps);
        }
        prop_assert_eq!(bulk.stats(), words.stats());
        prop_assert_eq!(&bulk.write_counts, &words.write_counts);
        prop_assert_eq!(&bulk.inverted, &words.inverted);
        prop_assert_eq!(&bulk.data, &words.data);
        prop_assert_eq!(bulk.wear(PcmAddr(0), 4096).unwrap(), words.wear(PcmAddr(0), 4096).unwrap());
    }
}

/// Timed calls (`timed.rs`), cidr11: read line 115 ns, write word 225 ns, 64 B lines over 4
/// banks (line `i` in bank `i mod 4`).
#[test]
fn timed_calls_on_different_banks_overlap_and_on_one_bank_serialise() {
    let ns = SimTime::from_ns;
    let mut d = cidr();
    // call A at 0: one word in line 0 (bank 0), then a read of line 0: 225 + 115 = 340 ns
    d.begin_call(ns(0));
    d.write(PcmAddr(0), &[1; 8]).unwrap();
    d.charge_read(PcmAddr(0), 8).unwrap();
    assert_eq!(d.end_call(), ns(340));
    // call B at 100 on bank 1 (line 1): starts at once, ends 100 + 225 = 325 (before A)
    d.begin_call(ns(100));
    d.write(PcmAddr(64), &[1; 8]).unwrap();
    assert_eq!(d.end_call(), ns(325));
    // call C at 100 on bank 0: waits for A's read (bank 0 free at 340), ends 340 + 225 = 565
    d.begin_call(ns(100));
    d.write(PcmAddr(4 * 64), &[1; 8]).unwrap();
    assert_eq!(d.end_call(), ns(565));
    assert_eq!(d.bank_free_at(0), ns(565));
    assert_eq!(d.bank_free_at(1), ns(325));
    // call D at 200: a 4-line read over banks 0..3: banks 2, 3 start at 200, bank 1 at 325,
    // bank 0 at 565 -> ends 565 + 115 = 680; then a word on bank 2 starts at 680, ends 905
    d.begin_call(ns(200));
    d.charge_read(PcmAddr(0), 256).unwrap();
    d.write(PcmAddr(2 * 64), &[1; 8]).unwrap();
    assert_eq!(d.end_call(), ns(905));
    assert_eq!(
        d.stats().bank_busy,
        vec![
            ns(225 + 115 + 225 + 115),
            ns(225 + 115),
            ns(115 + 225),
            ns(115)
        ]
    );
    // an unchanged word and an empty read cost nothing and occupy nothing
    d.begin_call(ns(1000));
    d.write(PcmAddr(0), &[1; 8]).unwrap();
    d.charge_read(PcmAddr(0), 0).unwrap();
    assert_eq!(d.end_call(), ns(1000));
    // outside a call nothing is occupied
    d.write(PcmAddr(0), &[2; 8]).unwrap();
    assert_eq!(d.bank_free_at(0), ns(680));
}

#[test]
fn a_timed_call_on_an_idle_device_takes_its_summed_latency() {
    let mut d = cidr();
    let at = SimTime::from_us(7);
    d.begin_call(at);
    let mut sum = AccessCost::default();
    sum += d.write(PcmAddr(40), &[9; 300]).unwrap();
    sum += d.charge_read(PcmAddr(0), 4096).unwrap();
    d.compute(SimTime::from_ns(1500));
    sum.latency += SimTime::from_ns(1500);
    sum += d.write(PcmAddr(8192), &[3; 64]).unwrap();
    assert_eq!(d.end_call(), at + sum.latency);
}

#[test]
fn timed_calls_share_one_hashing_unit() {
    let ns = SimTime::from_ns;
    let mut d = cidr();
    // A hashes 1000 ns from 0, then writes bank 0 (1000..1225); B hashes after A (1000..2000),
    // then writes bank 1 (2000..2225)
    d.begin_call(ns(0));
    d.compute(ns(1000));
    d.write(PcmAddr(0), &[1; 8]).unwrap();
    assert_eq!(d.end_call(), ns(1225));
    d.begin_call(ns(500));
    d.compute(ns(1000));
    d.write(PcmAddr(64), &[1; 8]).unwrap();
    assert_eq!(d.end_call(), ns(2225));
    // outside a call hashing takes no time
    d.compute(ns(1000));
    d.begin_call(ns(3000));
    assert_eq!(d.end_call(), ns(3000));
}
