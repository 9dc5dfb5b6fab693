//! Command chains of every op kind × register mode × plane count, fed through the die; a few
//! corrupted chains; summaries; address encode/decode round trips.

use super::*;
use crate::error::NandError;
use crate::geometry::Geometry;
use crate::op::{FlashOp, OpKind, RegisterMode};
use crate::preset::preset_names;
use proptest::prelude::*;

/// Pages `page` of `block` on planes `0..planes`.
fn planes(planes: u32, block: u32, page: u32) -> Vec<PageAddress> {
    (0..planes).map(|p| at(p, block, page)).collect()
}

/// A stream of `count` ops of `kind` and `mode` on `plane_count` planes, each validated.
fn stream(
    geometry: &Geometry,
    kind: OpKind,
    mode: RegisterMode,
    plane_count: u32,
    block: u32,
    count: u32,
) -> Vec<FlashOp> {
    (0..count)
        .map(|i| {
            let mut op = match kind {
                OpKind::Copyback => FlashOp::multiplane_copyback(
                    planes(plane_count, block, i),
                    planes(plane_count, block + 1, i),
                ),
                OpKind::Erase => FlashOp::multiplane(kind, planes(plane_count, block + i, 0)),
                _ => FlashOp::multiplane(kind, planes(plane_count, block, i)),
            };
            op.mode = mode;
            op.validate(geometry).unwrap();
            op
        })
        .collect()
}

#[test]
fn every_kind_mode_and_plane_count_runs_through_the_die() {
    // tlc-b17a has four planes per die
    for name in ["mlc1", "tlc-b17a"] {
        let config = preset(name).unwrap();
        let geometry = &config.geometry;
        let mut die = die(&config);
        let mut now = SimTime::ZERO;
        let mut block = 0;
        for plane_count in 1..=geometry.planes_per_die {
            // SiM kinds need a SiM device: tested in search_tests
            for kind in OpKind::ALL.into_iter().filter(|k| !k.is_search()) {
                for mode in [RegisterMode::Legacy, RegisterMode::Cache] {
                    if mode == RegisterMode::Cache
                        && matches!(kind, OpKind::Erase | OpKind::Copyback)
                    {
                        continue;
                    }
                    for count in [1, 2, 4] {
                        let ops = stream(geometry, kind, mode, plane_count, block, count);
                        block += 2 + count;
                        let chain = match mode {
                            RegisterMode::Cache => cache_stream_chain(&ops, geometry, die.timing()),
                            RegisterMode::Legacy => ops
                                .iter()
                                .flat_map(|op| command_chain(op, geometry, die.timing()))
                                .collect(),
                        };
                        let end = die.run(now, &chain).unwrap_or_else(|e| {
                            panic!("{name} {kind:?} {mode:?} x{plane_count} planes x{count}: {e}")
                        });
                        assert!(end > now);
                        now = die.run(end, &[Cycle::WaitReady]).unwrap();
                    }
                }
            }
        }
    }
}

#[test]
fn legacy_chain_summaries_match_the_stage_model() {
    let config = mlc1();
    let g = &config.geometry;
    let t = die(&config).timing().clone();
    for n in 1..=2u32 {
        let summary = |kind| {
            let op = &stream(g, kind, RegisterMode::Legacy, n, 2, 1)[0];
            chain_summary(&command_chain(op, g, &t))
        };
        let output_selects = if n > 1 { n } else { 0 };
        assert_eq!(
            summary(OpKind::Read),
            ChainSummary {
                commands: 2 * n + 2 * output_selects,
                address_cycles: 5 * n + 5 * output_selects,
                data_out_bytes: 2048 * u64::from(n),
                ..ChainSummary::default()
            }
        );
        let status = ChainSummary {
            status_reads: 1,
            ..ChainSummary::default()
        };
        assert_eq!(
            summary(OpKind::Program),
            ChainSummary {
                commands: 2 * n,
                address_cycles: 5 * n,
                data_in_bytes: 2048 * u64::from(n),
                ..status
            }
        );
        assert_eq!(
            summary(OpKind::Erase),
            ChainSummary {
                commands: 2 * n,
                address_cycles: 3 * n,
                ..status
            }
        );
        assert_eq!(
            summary(OpKind::Copyback),
            ChainSummary {
                commands: 4 * n,
                address_cycles: 10 * n,
                ..status
            }
        );
    }
    let enhanced = [
        Cycle::Command(commands::READ_STATUS_ENHANCED),
        Cycle::Address(0),
        Cycle::Address(0),
        Cycle::Address(0),
        Cycle::DataOut { bytes: 1 },
        Cycle::WaitReady,
    ];
    assert_eq!(
        chain_summary(&enhanced),
        ChainSummary {
            status_reads: 1,
            ..ChainSummary::default()
        }
    );
}

#[test]
fn a_read_chain_cycle_by_cycle() {
    let config = mlc1();
    let t = die(&config).timing().clone();
    // plane 1, block 3, page 5: block in die 3 * 2 + 1 = 7, row = 7 << 7 | 5 = 0x385
    let chain = command_chain(&FlashOp::read(at(1, 3, 5)), &config.geometry, &t);
    assert_eq!(
        chain,
        [
            Cycle::Command(0x00),
            Cycle::Address(0x00),
            Cycle::Address(0x00),
            Cycle::Address(0x85),
            Cycle::Address(0x03),
            Cycle::Address(0x00),
            Cycle::Command(0x30),
            Cycle::WaitReady,
            Cycle::DataOut { bytes: 2048 },
        ]
    );
    let text: Vec<String> = chain[..2].iter().map(ToString::to_string).collect();
    assert_eq!(text, ["command 00h", "address cycle"]);
    assert_eq!(
        Cycle::DataOut { bytes: 1 }.to_string(),
        "data output of 1 byte"
    );
    assert_eq!(Cycle::WaitReady.to_string(), "wait for ready (R/B#)");
    // a cache program ends with 15h inside a stream and 10h at its end
    let ops: Vec<_> = (0..2)
        .map(|p| FlashOp::program(at(0, 0, p)).cached())
        .collect();
    let first = command_chain_at(&ops[0], &config.geometry, &t, ChainPosition::First);
    assert!(first.contains(&Cycle::Command(commands::CACHE_PROGRAM_CONFIRM)));
    let last = command_chain_at(
        &ops[1],
        &config.geometry,
        &t,
        ChainPosition::Last { previous: &ops[0] },
    );
    assert!(last.contains(&Cycle::Command(commands::PROGRAM_CONFIRM)));
    assert_eq!(
        command_chain(&ops[0], &config.geometry, &t),
        command_chain(&FlashOp::program(at(0, 0, 0)), &config.geometry, &t)
    );
}

#[test]
fn corrupted_chains_fail_naming_what_was_expected() {
    let config = mlc1();
    let g = &config.geometry;
    let run = |chain: &[Cycle]| {
        die(&config)
            .run(SimTime::ZERO, chain)
            .unwrap_err()
            .to_string()
    };
    let t = die(&config).timing().clone();
    let read = command_chain(&FlashOp::read(at(0, 1, 0)), g, &t);
    let program = command_chain(&FlashOp::program(at(0, 1, 0)), g, &t);

    let mut missing_confirm = read.clone();
    missing_confirm.retain(|c| *c != Cycle::Command(commands::READ_CONFIRM));
    assert!(run(&missing_confirm).contains(
        "expected 30h, 31h, 32h or 35h after 00h-address, got data output of 2048 bytes"
    ));

    let mut short_address = program.clone();
    short_address.remove(5);
    assert!(
        run(&short_address)
            .contains("expected address cycle 5 of 5 after 80h, got data input of 2048 bytes")
    );

    let mut data_in_on_read = read.clone();
    data_in_on_read.insert(6, Cycle::DataIn { bytes: 2048 });
    assert!(
        run(&data_in_on_read)
            .contains("expected 30h, 31h, 32h or 35h after 00h-address, got data input")
    );

    let mut missing_wait = program.clone();
    missing_wait.retain(|c| *c != Cycle::WaitReady);
    missing_wait.extend(read.iter().copied());
    assert!(run(&missing_wait).contains("busy until 301.375 us"));

    let below = [
        command_chain(&FlashOp::program(at(0, 1, 6)), g, &t),
        command_chain(&FlashOp::program(at(0, 1, 2)), g, &t),
    ]
    .concat();
    assert!(run(&below).contains("page 2 is below the last programmed page 6"));

    let mut worn = config.clone();
    worn.reliability.endurance_cycles = 1;
    let erase = command_chain(&FlashOp::erase(at(1, 1, 0)), g, &t);
    let error = die(&worn)
        .run(SimTime::ZERO, &[erase.clone(), erase].concat())
        .unwrap_err();
    assert!(
        matches!(
            error,
            NandError::EnduranceExceeded {
                count: 2,
                limit: 1,
                ..
            }
        ),
        "{error}"
    );
}

proptest! {
    #[test]
    fn page_addresses_round_trip_on_every_preset(
        which in 0usize..6, plane in 0u32..16, block in 0u32..1 << 14, page in 0u32..1 << 12, column in 0u32..20_000,
    ) {
        let names = preset_names();
        let config = preset(names[which % names.len()]).unwrap();
        let g = &config.geometry;
        let die = die(&config);
        let address = at(plane % g.planes_per_die, block % g.blocks_per_plane, page % g.pages_per_block);
        let column = column % (g.page_size_bytes + g.spare_bytes_per_page);
        let mut cycles = Vec::new();
        die.layout().push_page_address(&address, column, &mut cycles);
        prop_assert_eq!(cycles.len() as u32, config.timing.page_address_cycles);
        let bytes: Vec<u8> = cycles.iter().map(|c| match c { Cycle::Address(b) => *b, _ => unreachable!() }).collect();
        let decoded = die.layout().decode_page(&bytes, commands::READ).unwrap();
        prop_assert_eq!(decoded, DieAddress { plane: address.plane, block: address.block, page: address.page, column });
        let row = &bytes[bytes.len() - die.layout().row_cycles() as usize..];
        let block_only = die.layout().decode_row(row, commands::ERASE, false).unwrap();
        prop_assert_eq!((block_only.plane, block_only.block, block_only.page), (address.plane, address.block, 0));
    }
}
