//! SiM vendor commands on the die (sim2024 preset): chains from the transaction interface run
//! through the die with the same times as the stage model, and each rule's violation is refused.

use super::*;
use crate::onfi::commands as op;
use crate::search::BlockMode;
use crate::sim::NandSim;

fn sim_die() -> (NandConfig, OnfiDie) {
    let config = preset("sim2024").unwrap();
    let die = die(&config);
    (config, die)
}

/// Block `block` to match mode and pages `0..pages` programmed (legacy program chains).
fn prepare(config: &NandConfig, die: &mut OnfiDie, block: u32, pages: u32) -> SimTime {
    let mut cycles = setup(
        op::SIM_BLOCK_MODE,
        row_cycles(die, at(0, block, 0)),
        Some(op::SIM_MODE_MATCH_CONFIRM),
    );
    for p in 0..pages {
        cycles.extend(command_chain(
            &FlashOp::program(at(0, block, p)),
            &config.geometry,
            die.timing(),
        ));
    }
    die.run(SimTime::ZERO, &cycles).unwrap()
}

#[test]
fn sim_chains_take_the_stage_model_times() {
    let (config, mut die) = sim_die();
    let mut now = prepare(&config, &mut die, 0, 2);
    let mut model = NandSim::new(config.clone(), 1).unwrap();
    model
        .set_block_mode(&at(0, 0, 0), BlockMode::Match)
        .unwrap();
    for p in 0..2 {
        model
            .submit(model.now(), &FlashOp::program(at(0, 0, p)))
            .unwrap();
    }
    let mut done = Vec::new();
    model.run_until_idle(&mut done);
    let ops = [
        FlashOp::page_open(at(0, 0, 0)),
        FlashOp::search(at(0, 0, 0), 1),
        FlashOp::search(at(0, 0, 0), 3),
        FlashOp::gather(at(0, 0, 0), 0b101),
        FlashOp::page_open_cache(at(0, 0, 1)),
        FlashOp::page_close(at(0, 0, 0)),
        FlashOp::gather(at(0, 0, 0), 1),
    ];
    for flash_op in ops {
        let chain = command_chain(&flash_op, &config.geometry, die.timing());
        let mut chain_cycles = chain.clone();
        if flash_op.kind == crate::OpKind::PageClose {
            // the window of the page that moved up from Latch 1
            chain_cycles.push(Cycle::DataOut { bytes: 256 });
        }
        let end = die
            .run(now, &chain_cycles)
            .unwrap_or_else(|e| panic!("{:?}: {e}", flash_op.kind));
        let end = die.run(end, &[Cycle::WaitReady]).unwrap();
        done.clear();
        let at_time = model.now().max(now);
        model.submit(at_time, &flash_op).unwrap();
        model.run_until_idle(&mut done);
        if flash_op.kind != crate::OpKind::PageOpen || flash_op.mode == crate::RegisterMode::Legacy
        {
            assert_eq!(end - now, done[0].latency(), "{:?}", flash_op.kind);
        }
        now = end.max(model.now());
    }
    assert!(die.breakdown().get(crate::Stage::Match) > SimTime::ZERO);
}

/// Feeds `cycles` to `die` and returns the refusal; then resets the die (FFh).
fn refused(die: &mut OnfiDie, cycles: &[Cycle]) -> String {
    let error = failure(die, cycles).to_string();
    die.cycle(SimTime::ZERO, Cycle::Command(op::RESET)).unwrap();
    error
}

fn open(die: &OnfiDie, block: u32, page: u32, confirm: u8) -> Vec<Cycle> {
    let mut cycles = setup(
        op::SIM_PAGE_OPEN,
        page_cycles(die, at(0, block, page)),
        Some(confirm),
    );
    cycles.push(Cycle::WaitReady);
    cycles
}

fn search(die: &OnfiDie, page: u32, bytes: u32) -> Vec<Cycle> {
    let mut cycles = setup(op::SIM_SEARCH, page_cycles(die, at(0, 0, page)), None);
    cycles.push(Cycle::DataIn { bytes });
    cycles.push(Cycle::Command(op::SIM_SEARCH_CONFIRM));
    cycles
}

#[test]
fn sim_rules_are_refused_by_the_die() {
    let (config, mut die) = sim_die();
    prepare(&config, &mut die, 0, 2);
    let page_open = op::SIM_PAGE_OPEN_CONFIRM;
    let cycles = open(&die, 1, 0, page_open);
    let m = refused(&mut die, &cycles);
    assert!(m.contains("storage mode"), "{m}");
    let cycles = search(&die, 0, 16);
    let m = refused(&mut die, &cycles);
    assert!(m.contains("not active"), "{m}");
    let m = refused(&mut die, &[Cycle::Command(op::SIM_PAGE_CLOSE)]);
    assert!(m.contains("no page is active"), "{m}");
    let cycles = setup(
        op::SIM_BLOCK_MODE,
        row_cycles(&die, at(0, 0, 0)),
        Some(op::SIM_MODE_STORAGE_CONFIRM),
    );
    let m = refused(&mut die, &cycles);
    assert!(m.contains("erase it before"), "{m}");
    // with page 0 open (each refusal resets the die, which empties the latches: reopen)
    let reopen = |die: &mut OnfiDie| {
        let cycles = open(die, 0, 0, page_open);
        die.run(SimTime::ZERO, &cycles).unwrap();
        die.run(SimTime::ZERO, &[Cycle::DataOut { bytes: 256 }])
            .unwrap();
    };
    reopen(&mut die);
    let m = refused(&mut die, &[Cycle::DataOut { bytes: 1 }]);
    assert!(m.contains("a read (00h-address-30h)"), "{m}");
    reopen(&mut die);
    let cycles = open(&die, 0, 1, page_open);
    let m = refused(&mut die, &cycles);
    assert!(m.contains("C2h page-open-cache"), "{m}");
    reopen(&mut die);
    let cycles = search(&die, 0, 17);
    let m = refused(&mut die, &cycles);
    assert!(m.contains("keys of 16 bytes"), "{m}");
    reopen(&mut die);
    let cycles = setup(
        op::READ,
        page_cycles(&die, at(0, 0, 1)),
        Some(op::READ_CONFIRM),
    );
    let m = refused(&mut die, &cycles);
    assert!(m.contains("C3h page-close first"), "{m}");
    reopen(&mut die);
    let cycles = open(&die, 0, 1, op::SIM_PAGE_OPEN_CACHE_CONFIRM);
    die.run(SimTime::ZERO, &cycles).unwrap();
    let cycles = open(&die, 0, 1, op::SIM_PAGE_OPEN_CACHE_CONFIRM);
    let m = refused(&mut die, &cycles);
    assert!(m.contains("already waits in Latch 1"), "{m}");
    // a device without [search]
    let mut plain = super::die(&mlc1());
    let m = refused(&mut plain, &[Cycle::Command(op::SIM_PAGE_CLOSE)]);
    assert!(m.contains("[search]"), "{m}");
}
