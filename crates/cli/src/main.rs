//! The `nandlab` executable: the command line of [`nandlab_cli::run_cli`].

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(nandlab_cli::run_cli(std::env::args_os().collect(), None))
}
