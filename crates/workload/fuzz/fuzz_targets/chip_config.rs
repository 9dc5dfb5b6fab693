//! The chip config parser (`nandlab_nand::preset::parse_config`) must never panic: any text
//! gives a validated config or one error on one line. A validated config must also build a
//! chip model (within a small memory budget) that runs one program and one read without
//! panicking: validation must not let through a value that breaks the model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nandlab_nand::preset::parse_config;
use nandlab_nand::{FlashOp, NandSim, PageAddress};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = match parse_config("fuzz", text) {
        Ok(config) => config,
        Err(error) => {
            let message = error.to_string();
            assert!(!message.contains('\n') || message.contains("cannot parse"), "{message}");
            return;
        }
    };
    // keep the fuzzer fast and bounded: skip devices whose tables are large
    if config.memory_estimate_bytes() > 64 << 20 {
        return;
    }
    let Ok(mut sim) = NandSim::new(config, 0) else {
        return;
    };
    let page = PageAddress::default();
    let mut done = Vec::new();
    if sim.submit(sim.now(), &FlashOp::program(page)).is_ok() {
        sim.run_until_idle(&mut done);
    }
    if sim.submit(sim.now(), &FlashOp::read(page)).is_ok() {
        sim.run_until_idle(&mut done);
    }
});
