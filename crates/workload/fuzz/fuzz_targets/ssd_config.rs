//! The SSD config parser (`nandlab_ftl::SsdConfig::from_toml`: `[device]` with a preset and
//! overrides or a full chip config, `[ftl]`) must never panic: any text gives a validated config
//! or one error. A validated config gets a memory estimate (never a panic) and, when small,
//! builds and runs a few requests.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nandlab_ftl::{HostRequest, Ssd, SsdConfig};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = SsdConfig::from_toml(text) else {
        return;
    };
    let Ok(estimate) = config.memory_estimate() else {
        return;
    };
    if estimate.total_bytes() > 64 << 20 {
        return;
    }
    let Ok(mut ssd) = Ssd::new(config, 0) else {
        return;
    };
    let page = u64::from(ssd.page_size_bytes());
    let requests = (0..8u64).map(|i| {
        if i % 3 == 2 {
            HostRequest::read(i * page, page)
        } else {
            HostRequest::write(i * page, page)
        }
    });
    let _ = ssd.run(requests);
});
