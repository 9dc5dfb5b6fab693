//! [`SsdDevice::read_page_expecting`]: the same read as `read_page` (time, energy, counters),
//! with the page compared in place: `true` leaves the buffer alone, `false` fills it.

use super::*;
use nandlab_ftl::{PayloadMode, SsdConfig};

fn device(write_buffer_pages: u32) -> SsdDevice {
    let mut config = SsdConfig::from_preset("miyaji2014");
    config.device.overrides = Some(
        toml::from_str("[geometry]\nchannels = 1\nblocks_per_plane = 32\npages_per_block = 8\n")
            .unwrap(),
    );
    config.ftl.payload = PayloadMode::Full;
    SsdDevice::new(Ssd::new(config, 1).unwrap()).buffered_writes(write_buffer_pages)
}

fn page(device: &SsdDevice, fill: u8) -> Vec<u8> {
    let mut p = vec![fill; device.page_size_bytes()];
    p[0] = fill.wrapping_add(1);
    p
}

#[test]
fn a_compared_read_costs_what_a_read_costs_and_copies_only_a_differing_page() {
    // unbuffered (a flash read) and buffered (a hit in the controller's write buffer)
    for write_buffer_pages in [0, 4] {
        let (mut plain, mut compared) = (device(write_buffer_pages), device(write_buffer_pages));
        let written = page(&plain, 7);
        for d in [&mut plain, &mut compared] {
            d.write_page(Lpa(3), &written).unwrap();
            d.write_page(Lpa(5), &page(d, 9)).unwrap();
        }
        let mut buf = vec![0; written.len()];
        for _ in 0..2 {
            plain.read_page(Lpa(3), &mut buf).unwrap();
        }
        assert_eq!(buf, written);
        // equal: true, buffer untouched
        let mut expected = written.clone();
        assert!(compared.read_page_expecting(Lpa(3), &mut expected).unwrap());
        assert_eq!(expected, written);
        // different: false, buffer filled with the page
        let mut stale = page(&compared, 1);
        assert!(!compared.read_page_expecting(Lpa(3), &mut stale).unwrap());
        assert_eq!(stale, written, "buffer {write_buffer_pages}");
        assert_eq!(plain.now(), compared.now(), "buffer {write_buffer_pages}");
        assert_eq!(plain.counters(), compared.counters());
        assert_eq!(plain.energy_mj(), compared.energy_mj());
        assert_eq!(plain.buffer_hits, compared.buffer_hits);
        assert_eq!(
            compared.buffer_hits,
            if write_buffer_pages > 0 { 2 } else { 0 }
        );
        // an LPA never written reads as zeros, compared or not
        let mut zeros = vec![0; written.len()];
        assert!(compared.read_page_expecting(Lpa(4), &mut zeros).unwrap());
        let mut not_zeros = page(&compared, 2);
        assert!(
            !compared
                .read_page_expecting(Lpa(4), &mut not_zeros)
                .unwrap()
        );
        assert!(not_zeros.iter().all(|&b| b == 0));
        // bad arguments are errors, as for read_page
        assert!(
            compared
                .read_page_expecting(Lpa(1 << 30), &mut zeros)
                .is_err()
        );
        assert!(compared.read_page_expecting(Lpa(3), &mut [0; 8]).is_err());
    }
}
