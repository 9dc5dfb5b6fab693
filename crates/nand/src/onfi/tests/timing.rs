//! Hand-computed timings on `mlc1`: tWC 25 ns, 25 ns per byte, tR 50 us, tPROG 250 us (LSB)
//! / 2,200 us (MSB, paired layout), tBERS 2,500 us; 5 page and 3 row address cycles.

use super::*;
use crate::op::{FlashOp, OpKind};
use crate::stage::Stage;

fn us_ns(us: u64, ns: u64) -> SimTime {
    SimTime::from_us(us) + SimTime::from_ns(ns)
}

#[test]
fn legacy_read_of_2_kib_takes_101_375_us() {
    let config = mlc1();
    let mut die = die(&config);
    let chain = command_chain(&FlashOp::read(at(0, 0, 0)), &config.geometry, die.timing());
    // 00h, 5 address cycles, 30h: 7 x 25 ns; TON 50 us; TOR 2,048 x 25 ns = 51.2 us
    let end = die.run(SimTime::ZERO, &chain).unwrap();
    assert_eq!(end, us_ns(101, 375));
    let b = die.breakdown();
    assert_eq!(b.get(Stage::Cle), ns(50));
    assert_eq!(b.get(Stage::Ale), ns(125));
    assert_eq!(b.get(Stage::Ton), SimTime::from_us(50));
    assert_eq!(b.get(Stage::Tor), ns(51_200));
    assert_eq!(
        b.get(Stage::Tin) + b.get(Stage::Tir) + b.get(Stage::Status),
        SimTime::ZERO
    );
    assert_eq!(die.erased_page_reads(), 1);
}

#[test]
fn confirm_reports_the_array_stage_and_ready_time() {
    let config = mlc1();
    let mut die = die(&config);
    let mut now = SimTime::ZERO;
    for cycle in setup(commands::READ, page_cycles(&die, at(1, 2, 3)), None) {
        now = die.cycle(now, cycle).unwrap().end;
    }
    assert_eq!(now, ns(150));
    let confirm = die
        .cycle(now, Cycle::Command(commands::READ_CONFIRM))
        .unwrap();
    assert_eq!((confirm.start, confirm.end), (ns(150), ns(175)));
    assert_eq!(confirm.stage, Some(Stage::Cle));
    let array = confirm.array.unwrap();
    assert_eq!(
        (array.stage, array.start, array.end),
        (Stage::Ton, ns(175), us_ns(50, 175))
    );
    assert_eq!(confirm.ready_at, us_ns(50, 175));
    let wait = die.cycle(confirm.end, Cycle::WaitReady).unwrap();
    assert_eq!((wait.end, wait.stage), (us_ns(50, 175), None));
    // a cycle offered before the interface is free starts when it is
    let out = die
        .cycle(SimTime::ZERO, Cycle::DataOut { bytes: 100 })
        .unwrap();
    assert_eq!((out.start, out.end), (us_ns(50, 175), us_ns(52, 675)));
}

#[test]
fn legacy_program_of_page_0_by_stage() {
    let config = mlc1();
    let mut die = die(&config);
    let chain = command_chain(
        &FlashOp::program(at(0, 0, 0)),
        &config.geometry,
        die.timing(),
    );
    // 25 + 125 + 51,200 + 25 ns, 250 us (LSB), status 70h + 1 byte = 50 ns
    let end = die.run(SimTime::ZERO, &chain).unwrap();
    assert_eq!(end, us_ns(301, 425));
    let b = die.breakdown();
    assert_eq!(b.get(Stage::Cle), ns(50));
    assert_eq!(b.get(Stage::Ale), ns(125));
    assert_eq!(b.get(Stage::Tir), ns(51_200));
    assert_eq!(b.get(Stage::Tin), SimTime::from_us(250));
    assert_eq!(b.get(Stage::Status), ns(50));
    assert!(die.is_programmed(&at(0, 0, 0)).unwrap());
    // page 4 is an MSB page of the paired layout: 2,200 us
    let chain = command_chain(
        &FlashOp::program(at(0, 0, 4)),
        &config.geometry,
        die.timing(),
    );
    let end2 = die.run(end, &chain).unwrap();
    assert_eq!(end2 - end, us_ns(2251, 425));
}

#[test]
fn erase_takes_tbers_plus_five_cycles_and_a_status_read() {
    let config = mlc1();
    let mut die = die(&config);
    let chain = command_chain(&FlashOp::erase(at(1, 9, 0)), &config.geometry, die.timing());
    // 60h, 3 row cycles, D0h: 125 ns; BER 2,500 us; status 50 ns
    assert_eq!(die.run(SimTime::ZERO, &chain).unwrap(), us_ns(2500, 175));
    assert_eq!(die.breakdown().get(Stage::Ber), SimTime::from_us(2500));
    assert_eq!(die.breakdown().get(Stage::Ale), ns(75));
    assert_eq!(die.erase_count(&at(1, 9, 0)).unwrap(), 1);
    assert_eq!(die.erase_count(&at(0, 9, 0)).unwrap(), 0);
}

#[test]
fn multiplane_program_overlaps_the_planes_cell_stages() {
    let config = mlc1();
    let mut die = die(&config);
    let op = FlashOp::multiplane(OpKind::Program, vec![at(0, 0, 0), at(1, 0, 0)]);
    let chain = command_chain(&op, &config.geometry, die.timing());
    // two bursts of 7 cycles + 51.2 us (102.75 us), one TIN of 250 us, status 50 ns
    assert_eq!(die.run(SimTime::ZERO, &chain).unwrap(), us_ns(352, 800));
    let b = die.breakdown();
    assert_eq!(b.get(Stage::Cle), ns(100));
    assert_eq!(b.get(Stage::Tir), ns(102_400));
    assert_eq!(b.get(Stage::Tin), SimTime::from_us(250));
}

#[test]
fn cache_program_overlaps_the_second_data_input_with_the_first_tin() {
    let config = mlc1();
    let mut die = die(&config);
    let ops: Vec<_> = (0..2)
        .map(|p| FlashOp::program(at(0, 0, p)).cached())
        .collect();
    let chain = cache_stream_chain(&ops, &config.geometry, die.timing());
    let mut now = SimTime::ZERO;
    let mut outcomes = Vec::new();
    for cycle in &chain {
        let outcome = die.cycle(now, *cycle).unwrap();
        now = outcome.end;
        outcomes.push((*cycle, outcome));
    }
    // first page: 80h-addr-data-15h ends at 51.375 us; its TIN runs to 301.375 us but the die
    // is ready at once
    let (_, first_confirm) = outcomes[7];
    assert_eq!(first_confirm.end, us_ns(51, 375));
    assert_eq!(first_confirm.ready_at, us_ns(51, 375));
    assert_eq!(first_confirm.array.unwrap().end, us_ns(301, 375));
    // second page's data input runs during the first TIN
    let (cycle, data) = outcomes
        .iter()
        .filter(|(c, _)| matches!(c, Cycle::DataIn { .. }))
        .nth(1)
        .copied()
        .unwrap();
    assert_eq!(cycle, Cycle::DataIn { bytes: 2048 });
    assert_eq!((data.start, data.end), (us_ns(51, 575), us_ns(102, 775)));
    assert!(data.end < first_confirm.array.unwrap().end);
    // 10h at 102.8 us: the second TIN waits for the first, ends at 551.375 us
    assert_eq!(now, us_ns(551, 425));
    assert_eq!(die.breakdown().get(Stage::Tin), SimTime::from_us(500));
    // two legacy programs would take 2 x 301.425 us
    assert!(now < us_ns(602, 850));
}

#[test]
fn cache_program_confirm_waits_for_the_data_register() {
    let config = mlc1();
    let mut die = die(&config);
    let ops: Vec<_> = (0..3)
        .map(|p| FlashOp::program(at(0, 0, p)).cached())
        .collect();
    let chain = cache_stream_chain(&ops, &config.geometry, die.timing());
    let mut now = SimTime::ZERO;
    let mut confirms = Vec::new();
    for cycle in &chain {
        let outcome = die.cycle(now, *cycle).unwrap();
        now = outcome.end;
        if outcome.array.is_some() {
            confirms.push(outcome);
        }
    }
    // the second 15h ends at 102.8 us but the data register is busy until 301.375 us
    assert_eq!(confirms[1].end, us_ns(102, 800));
    assert_eq!(confirms[1].ready_at, us_ns(301, 375));
    assert_eq!(confirms[1].array.unwrap().start, us_ns(301, 375));
    // the third (10h) starts after the second: 301.375 + 250 = 551.375, ends 801.375
    assert_eq!(confirms[2].array.unwrap().end, us_ns(801, 375));
    assert_eq!(now, us_ns(801, 425));
}

#[test]
fn cache_read_stream_of_three_pages() {
    let config = mlc1();
    let mut die = die(&config);
    let ops: Vec<_> = (0..3)
        .map(|p| FlashOp::read(at(0, 0, p)).cached())
        .collect();
    let chain = cache_stream_chain(&ops, &config.geometry, die.timing());
    // 30h at 0.175 us, TON to 50.175; 31h at 50.35 (TON p1 to 100.35), TOR p0 to 101.55;
    // 31h at 101.725 (TON p2 to 151.725), TOR p1 to 152.925; 3Fh at 152.95, TOR p2 to 204.15
    assert_eq!(die.run(SimTime::ZERO, &chain).unwrap(), us_ns(204, 150));
    let b = die.breakdown();
    assert_eq!(b.get(Stage::Cle), ns(175));
    assert_eq!(b.get(Stage::Ale), ns(375));
    assert_eq!(b.get(Stage::Ton), SimTime::from_us(150));
    assert_eq!(b.get(Stage::Tor), ns(153_600));
    // three legacy reads: 3 x 101.375 us
    assert!(us_ns(204, 150) < us_ns(304, 125));
}

#[test]
fn multiplane_read_selects_each_plane_with_change_read_column() {
    let config = mlc1();
    let mut die = die(&config);
    let op = FlashOp::multiplane(OpKind::Read, vec![at(0, 4, 9), at(1, 4, 9)]);
    let chain = command_chain(&op, &config.geometry, die.timing());
    // 2 x 7 cycles, TON 50 us, 2 x (06h, 5 addr, E0h + 51.2 us)
    assert_eq!(die.run(SimTime::ZERO, &chain).unwrap(), us_ns(153, 100));
    assert_eq!(die.breakdown().get(Stage::Cle), ns(200));
    assert_eq!(die.breakdown().get(Stage::Ale), ns(500));
}

#[test]
fn copyback_moves_a_page_without_data_on_the_bus() {
    let config = mlc1();
    let mut die = die(&config);
    let op = FlashOp::copyback(at(0, 0, 0), at(0, 1, 0));
    let chain = command_chain(&op, &config.geometry, die.timing());
    // 00h-addr-35h 175 ns, TON 50 us, 85h-addr-10h 175 ns, TIN 250 us, status 50 ns
    assert_eq!(die.run(SimTime::ZERO, &chain).unwrap(), us_ns(300, 400));
    let b = die.breakdown();
    assert_eq!(b.get(Stage::Tir) + b.get(Stage::Tor), SimTime::ZERO);
    assert!(die.is_programmed(&at(0, 1, 0)).unwrap());
}

#[test]
fn status_reads_are_accepted_while_busy() {
    let config = mlc1();
    let mut die = die(&config);
    let mut chain = command_chain(&FlashOp::erase(at(0, 0, 0)), &config.geometry, die.timing());
    chain.retain(|c| *c != Cycle::WaitReady);
    // 60h-addr-D0h ends at 125 ns; 70h and the status byte follow while BER runs
    let end = die.run(SimTime::ZERO, &chain).unwrap();
    assert_eq!(end, ns(175));
    assert_eq!(die.ready_at(), us_ns(2500, 125));
    let enhanced = setup(
        commands::READ_STATUS_ENHANCED,
        row_cycles(&die, at(1, 0, 0)),
        None,
    );
    let end = die.run(end, &enhanced).unwrap();
    let status = die.cycle(end, Cycle::DataOut { bytes: 1 }).unwrap();
    assert_eq!(status.stage, Some(Stage::Status));
    // 70h + byte, 78h + 3 row cycles + byte
    assert_eq!(die.breakdown().get(Stage::Status), ns(50 + 125));
}

#[test]
fn reset_aborts_the_cell_stage() {
    let config = mlc1();
    let mut die = die(&config);
    let mut chain = command_chain(
        &FlashOp::program(at(0, 0, 0)),
        &config.geometry,
        die.timing(),
    );
    chain.truncate(8); // up to and including 10h: ends at 51.375 us, TIN to 301.375 us
    let end = die.run(SimTime::ZERO, &chain).unwrap();
    let reset = die.cycle(end, Cycle::Command(commands::RESET)).unwrap();
    assert_eq!(reset.ready_at, us_ns(51, 400));
    assert_eq!(die.array_busy_until(), us_ns(51, 400));
    assert_eq!(die.breakdown().get(Stage::Tin), ns(25));
    // the die takes a new op at once
    let read = command_chain(&FlashOp::read(at(1, 0, 0)), &config.geometry, die.timing());
    die.run(reset.end, &read).unwrap();
}

#[test]
fn set_features_takes_an_address_and_four_bytes() {
    let config = mlc1();
    let mut die = die(&config);
    let chain = [
        Cycle::Command(commands::SET_FEATURES),
        Cycle::Address(0x89),
        Cycle::DataIn { bytes: 1 },
        Cycle::DataIn { bytes: 3 },
    ];
    assert_eq!(die.run(SimTime::ZERO, &chain).unwrap(), ns(150));
    assert_eq!(die.features_set(), 1);
}

#[test]
fn the_same_chain_gives_the_same_outcomes_twice() {
    let config = mlc1();
    let ops: Vec<_> = (0..4)
        .map(|p| FlashOp::read(at(1, 2, p)).cached())
        .collect();
    let run = || {
        let mut die = die(&config);
        let chain = cache_stream_chain(&ops, &config.geometry, die.timing());
        let mut now = SimTime::ZERO;
        let mut outcomes = Vec::new();
        for cycle in chain {
            let outcome = die.cycle(now, cycle).unwrap();
            now = outcome.end;
            outcomes.push(outcome);
        }
        (outcomes, *die.breakdown())
    };
    assert_eq!(run(), run());
}
