//! The `nandlab` command line.

use clap::{Args, Parser, Subcommand};
use nandlab_lab::chip::ChipRunSpec;
use nandlab_lab::experiments::{self, RunOptions, Scale};
use nandlab_lab::{LabError, LabResult, bench, output};
use nandlab_nand::sched::{ChipReport, ChipWorkloadKind, SchedulerPolicy};
use std::path::PathBuf;
use std::process::ExitCode;

/// nandlab: co-design laboratory for database software on NAND flash and PCM.
#[derive(Parser, Debug)]
#[command(name = "nandlab", version = nandlab_lab::version())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a chip-level workload on a NAND preset and print throughput, latency, stage
    /// breakdown, bus contention and energy.
    Chip(ChipArgs),
    /// Reproduce a paper result: `nandlab reproduce --list`, `nandlab reproduce ID --out DIR`.
    Reproduce(ReproduceArgs),
    /// Measure simulator speed (`nandlab bench chip`).
    Bench(BenchArgs),
    /// The main demo: a quick co-design experiment with a readable table.
    Demo,
    /// List the NAND presets with their sources.
    Presets,
}

#[derive(Args, Debug)]
struct ChipArgs {
    /// NAND preset (see `nandlab presets`).
    #[arg(long, default_value = "mlc1")]
    preset: String,
    /// A chip config file in the preset format (see presets/nand/); replaces --preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Workload: swr, srd (paper 003 Table II synthesized) or msnfs, fin, web, usr, prn mixes.
    #[arg(long, default_value = "swr")]
    workload: ChipWorkloadKind,
    #[arg(long, default_value_t = 10_000)]
    requests: u64,
    /// Request size of swr/srd in bytes (default: one page).
    #[arg(long, default_value_t = 0)]
    request_bytes: u32,
    #[arg(long)]
    channels: Option<u32>,
    /// Dies per channel.
    #[arg(long)]
    dies: Option<u32>,
    /// Planes per die.
    #[arg(long)]
    planes: Option<u32>,
    #[arg(long)]
    page_size: Option<u32>,
    /// Bus data rate in MT/s.
    #[arg(long)]
    bus_mts: Option<f64>,
    /// die-first, plane-first or fcfs.
    #[arg(long, default_value = "die-first")]
    scheduler: SchedulerPolicy,
    /// Use cache-mode reads and programs.
    #[arg(long)]
    cache: bool,
    /// Issue to one die of a channel at a time (no interleaved-die mode).
    #[arg(long)]
    no_interleave: bool,
    #[arg(long, default_value_t = 32)]
    queue_depth: u32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write report.json and CSVs into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct ReproduceArgs {
    /// Experiment id (see --list).
    id: Option<String>,
    #[arg(long)]
    list: bool,
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Small runs for tests and demos.
    #[arg(long)]
    quick: bool,
    /// Paper-scale runs.
    #[arg(long, conflicts_with = "quick")]
    full: bool,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(Args, Debug)]
struct BenchArgs {
    /// What to measure: chip.
    target: String,
    #[arg(long, default_value_t = 2_000_000)]
    requests: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> LabResult<()> {
    match cli.command {
        Command::Chip(args) => chip(args),
        Command::Reproduce(args) => reproduce(args),
        Command::Bench(args) => match args.target.as_str() {
            "chip" => {
                let b = bench::bench_chip(args.requests)?;
                println!("nandlab bench chip: 8 interleaved dies, 2 KB legacy writes (mlc1)");
                println!("  requests            {}", b.requests);
                println!("  flash ops           {}", b.flash_ops);
                println!("  events              {}", b.events);
                println!("  wall time           {:.3} s", b.wall_s);
                println!("  flash ops / wall-s  {:.0}", b.ops_per_wall_s);
                println!("  events / wall-s     {:.0}", b.events_per_wall_s);
                println!("  simulated time      {:.3} s", b.simulated_s);
                Ok(())
            }
            other => Err(LabError::Usage(format!(
                "unknown bench target `{other}` (expected: chip)"
            ))),
        },
        Command::Demo => demo(),
        Command::Presets => {
            for name in nandlab_nand::preset_names() {
                let c = nandlab_nand::preset(name)?;
                println!(
                    "{name:10} {}\n           source: {}\n",
                    c.description, c.source
                );
            }
            Ok(())
        }
    }
}

fn chip(args: ChipArgs) -> LabResult<()> {
    let mut spec = ChipRunSpec::new(&args.preset, args.workload, args.requests);
    if let Some(path) = &args.config {
        spec.load_device(path)?;
    }
    spec.channels = args.channels;
    spec.dies = args.dies;
    spec.planes = args.planes;
    spec.page_size_bytes = args.page_size;
    spec.bus_data_rate_mts = args.bus_mts;
    spec.request_bytes = args.request_bytes;
    spec.seed = args.seed;
    spec.driver.policy = args.scheduler;
    spec.driver.cache = args.cache;
    spec.driver.interleave = !args.no_interleave;
    spec.driver.queue_depth = args.queue_depth;
    let report = spec.run()?;
    print_chip_report(&spec, &report);
    if let Some(dir) = args.out {
        write_chip_report(&spec, &report, &dir)?;
        println!("\nwrote {}", dir.display());
    }
    Ok(())
}

fn print_chip_report(spec: &ChipRunSpec, r: &ChipReport) {
    println!(
        "chip run: preset {} | workload {} | {} requests | scheduler {} | cache {} | interleave {}",
        spec.preset,
        spec.workload.name(),
        r.requests,
        spec.driver.policy.name(),
        spec.driver.cache,
        spec.driver.interleave
    );
    println!(
        "simulated {:.3} ms | throughput {:.2} MB/s ({:.0} IOPS) | bus contention {:.1} % | bus utilization {:.1} %",
        r.sim_time_us / 1e3,
        r.throughput_mb_per_s,
        r.iops,
        100.0 * r.bus_contention_fraction,
        100.0 * r.bus_utilization
    );
    println!("\nlatency (us)    count       p50       p90       p99     p99.9       max");
    for (name, l) in [("read", &r.read_latency), ("write", &r.write_latency)] {
        if l.count > 0 {
            println!(
                "{name:10} {:>10} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
                l.count, l.p50_us, l.p90_us, l.p99_us, l.p999_us, l.max_us
            );
        }
    }
    println!("\nstage       time (ms)   time %   energy (uJ)  energy %");
    for s in &r.stages {
        println!(
            "{:8} {:>12.3} {:>8.1} {:>13.2} {:>9.1}",
            s.stage,
            s.time_us / 1e3,
            100.0 * s.time_fraction,
            s.energy_uj,
            100.0 * s.energy_fraction
        );
    }
    println!("\nop kind        ops   energy/op (uJ)   bus-stage %   mean latency (us)");
    for k in &r.op_kinds {
        println!(
            "{:10} {:>8} {:>16.2} {:>13.1} {:>19.1}",
            k.kind,
            k.ops,
            k.energy_per_op_uj,
            100.0 * k.bus_stage_fraction,
            k.latency.mean_us
        );
    }
    println!(
        "\nenergy {:.1} uJ (+ {:.1} uJ idle) | {} flash ops ({} multiplane) | {} events",
        r.energy_uj, r.idle_energy_uj, r.flash_ops, r.multiplane_ops, r.events
    );
}

fn write_chip_report(spec: &ChipRunSpec, r: &ChipReport, dir: &std::path::Path) -> LabResult<()> {
    let json = serde_json::json!({ "spec": spec, "report": r });
    output::write_file(
        &dir.join("report.json"),
        &(serde_json::to_string_pretty(&json).expect("report serializes") + "\n"),
    )?;
    let mut stages = String::from("stage,time_us,time_fraction,energy_uj,energy_fraction\n");
    for s in &r.stages {
        stages += &format!(
            "{},{},{},{},{}\n",
            s.stage, s.time_us, s.time_fraction, s.energy_uj, s.energy_fraction
        );
    }
    output::write_file(&dir.join("stages.csv"), &stages)?;
    let mut cdf = String::from("kind,latency_us,fraction\n");
    for (kind, points) in [("read", &r.read_cdf), ("write", &r.write_cdf)] {
        for p in points {
            cdf += &format!("{kind},{},{}\n", p.latency_us, p.fraction);
        }
    }
    output::write_file(&dir.join("latency_cdf.csv"), &cdf)?;
    let mut kinds = String::from("kind,ops,energy_uj,energy_per_op_uj,p50_us,p99_us,max_us\n");
    for k in &r.op_kinds {
        kinds += &format!(
            "{},{},{},{},{},{},{}\n",
            k.kind,
            k.ops,
            k.energy_uj,
            k.energy_per_op_uj,
            k.latency.p50_us,
            k.latency.p99_us,
            k.latency.max_us
        );
    }
    output::write_file(&dir.join("op_kinds.csv"), &kinds)
}

fn reproduce(args: ReproduceArgs) -> LabResult<()> {
    if args.list {
        for e in experiments::registry() {
            println!("{:16} {:34} {}", e.id, e.reference, e.title);
        }
        return Ok(());
    }
    let Some(id) = args.id else {
        return Err(LabError::Usage(
            "give an experiment id or --list (e.g. `nandlab reproduce nfs-energy --out results/nfs-energy`)".into(),
        ));
    };
    let options = RunOptions {
        scale: if args.quick {
            Scale::Quick
        } else if args.full {
            Scale::Full
        } else {
            Scale::Standard
        },
        seed: args.seed,
    };
    let result = experiments::reproduce(&id, &options, &args.out)?;
    println!("{id}:");
    for (k, v) in &result.metrics {
        println!("  {k:44} {v:.4}");
    }
    println!("wrote {}", args.out.display());
    Ok(())
}

/// Until the storage-engine experiments land, the demo is the chip-level die-scaling study of
/// NANDFlashSim (R-N1): reads barely scale with dies, writes do.
fn demo() -> LabResult<()> {
    println!(
        "nandlab demo: does adding dies to a NAND channel help? (NANDFlashSim R-N1, mlc1 preset)"
    );
    println!("2 KB requests, die-first scheduling, interleaved dies on one 40 MT/s channel\n");
    println!(
        "{:>5} {:>16} {:>17} {:>16} {:>17}",
        "dies", "write MB/s", "read MB/s", "write bus wait", "read bus wait"
    );
    let mut first: Option<(f64, f64)> = None;
    for dies in [1u32, 2, 4, 8] {
        let mut row = Vec::new();
        for workload in [ChipWorkloadKind::Swr, ChipWorkloadKind::Srd] {
            let mut spec = ChipRunSpec::new("mlc1", workload, 2_000);
            spec.dies = Some(dies);
            spec.request_bytes = 2048;
            row.push(spec.run()?);
        }
        let (w, r) = (row[0].throughput_mb_per_s, row[1].throughput_mb_per_s);
        let (w0, r0) = *first.get_or_insert((w, r));
        println!(
            "{:>5} {:>9.2} ({:>4.1}x) {:>10.2} ({:>4.1}x) {:>15.1}% {:>16.1}%",
            dies,
            w,
            w / w0,
            r,
            r / r0,
            100.0 * row[0].bus_contention_fraction,
            100.0 * row[1].bus_contention_fraction
        );
    }
    println!("\nWrites scale with dies because programming (TIN) runs on each die while the bus");
    println!("is free; reads saturate because moving data out (TOR) holds the shared bus.");
    println!("More: `nandlab reproduce --list`, `nandlab chip --help`.");
    Ok(())
}
