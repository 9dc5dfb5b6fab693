//! Wall-clock speed of the joins with PCM accounting on: tuples partitioned (build + probe,
//! over every join of the three thesis queries) per wall second, for each algorithm, layout
//! and mode. `cargo run -p nandlab-join --profile test-release --example join_speed -- 0.1`
//! (argument: the scale factor, default 0.1).

use nandlab_join::{Algorithm, Database, JoinSettings, Layout, Mode, thesis_queries};
use nandlab_workload::ssb::SsbData;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sf: f64 = match std::env::args().nth(1) {
        Some(a) => a
            .parse()
            .map_err(|_| format!("scale_factor: `{a}` is not a number"))?,
        None => 0.1,
    };
    let data = SsbData::new(sf, 1)?;
    let pcm = nandlab_pcm::preset("cidr11")?;
    println!("SF {sf}: layout, mode, algorithm, tuples partitioned, seconds, tuples/s");
    for layout in [Layout::Row, Layout::Column] {
        for mode in [
            Mode::Storage {
                buffer_bytes: (256e6 * sf) as u64,
            },
            Mode::MainMemory,
        ] {
            for algorithm in [Algorithm::Grace, Algorithm::Virtual] {
                let mut db = Database::build(&data, layout, &pcm, 1)?;
                let settings = JoinSettings {
                    algorithm,
                    mode,
                    partitions: 32,
                };
                let start = Instant::now();
                let mut tuples = 0;
                for q in thesis_queries() {
                    let run = db.run(&q, &settings)?;
                    tuples += run
                        .joins
                        .iter()
                        .map(|(c, _)| c.build_tuples + c.probe_tuples)
                        .sum::<u64>();
                }
                let s = start.elapsed().as_secs_f64();
                println!(
                    "{:6} {:11} {:7} {tuples:>11} {s:8.2} {:>12.0}",
                    layout.label(),
                    mode.label(),
                    algorithm.label(),
                    tuples as f64 / s
                );
            }
        }
    }
    Ok(())
}
