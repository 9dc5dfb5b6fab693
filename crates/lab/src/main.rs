use clap::Parser;

/// nandlab: co-design laboratory for database software on NAND flash and PCM.
#[derive(Parser, Debug)]
#[command(name = "nandlab", version = nandlab_lab::version())]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
    println!("nandlab {}", nandlab_lab::version());
}
