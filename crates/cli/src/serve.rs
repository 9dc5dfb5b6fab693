//! `nandlab serve`: exports a stack's simulated SSD over NBD. Parses the arguments and execs
//! nbdkit with nandlab's plugin (crates/nbd, `libnandlab_nbd.so`), which does the rest
//! (docs/serve.md).

use clap::Args;
use nandlab_lab::{LabError, LabResult};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

/// The plugin's file name.
const PLUGIN: &str = "libnandlab_nbd.so";
/// The environment variable naming the plugin (instead of looking next to the binary).
const PLUGIN_ENV: &str = "NANDLAB_NBD_PLUGIN";

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The SSD: a preset (see `nandlab presets`), a device file or a stack config (its
    /// [workload] is not run: the NBD clients are the workload).
    device: String,
    /// Listen on this Unix socket.
    #[arg(long, conflicts_with = "port", required_unless_present = "port")]
    socket: Option<PathBuf>,
    /// Listen on this TCP port of 127.0.0.1 (loopback only).
    #[arg(long)]
    port: Option<u16>,
    /// real-time: each reply is released when the wall clock reaches its simulated
    /// completion; none: replies go as soon as simulated.
    #[arg(long, default_value = "real-time", value_parser = ["real-time", "none"])]
    pace: String,
    /// At shutdown (SIGINT/SIGTERM), write report.json, metrics.json, config.json, the CSVs
    /// of `nandlab run --out` and serve.json into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// nbdkit worker threads per connection (the most commands in flight per connection).
    #[arg(long, default_value_t = 64)]
    threads: u32,
    /// The plugin (default: $NANDLAB_NBD_PLUGIN, else libnandlab_nbd.so next to this binary).
    #[arg(long)]
    plugin: Option<PathBuf>,
}

fn usage(message: String) -> LabError {
    LabError::Usage(message)
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The plugin: `--plugin`, the environment variable, or next to the binary (cargo puts a
/// dependency's library in `deps/`).
fn find_plugin(given: Option<&Path>) -> LabResult<PathBuf> {
    if let Some(p) = given {
        return match p.is_file() {
            true => Ok(absolute(p)),
            false => Err(usage(format!("--plugin {}: no such file", p.display()))),
        };
    }
    if let Some(p) = std::env::var_os(PLUGIN_ENV) {
        let p = PathBuf::from(p);
        return match p.is_file() {
            true => Ok(absolute(&p)),
            false => Err(usage(format!("{PLUGIN_ENV}={}: no such file", p.display()))),
        };
    }
    let exe = std::env::current_exe().map_err(|e| usage(format!("this binary's path: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    [dir.join(PLUGIN), dir.join("deps").join(PLUGIN)]
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| {
            usage(format!(
                "the NBD plugin {PLUGIN} is not next to {} (build it: cargo build --release -p nandlab-nbd; or give --plugin or {PLUGIN_ENV})",
                exe.display()
            ))
        })
}

/// The arguments of nbdkit (foreground, loopback only).
fn nbdkit_args(args: &ServeArgs, plugin: &Path) -> LabResult<Vec<String>> {
    let mut v = vec!["-f".to_string()];
    match (&args.socket, args.port) {
        (Some(socket), _) => {
            if socket.exists() {
                // a live server answers; a stale socket file is removed
                if std::os::unix::net::UnixStream::connect(socket).is_ok() {
                    return Err(usage(format!(
                        "--socket {}: another server is listening there",
                        socket.display()
                    )));
                }
                std::fs::remove_file(socket)
                    .map_err(|e| usage(format!("--socket {}: {e}", socket.display())))?;
            }
            v.extend(["-U".into(), absolute(socket).display().to_string()]);
        }
        (None, Some(port)) => {
            if std::net::TcpListener::bind(("127.0.0.1", port)).is_err() {
                return Err(usage(format!("--port {port}: 127.0.0.1:{port} is in use")));
            }
            v.extend([
                "-i".into(),
                "127.0.0.1".into(),
                "-p".into(),
                port.to_string(),
            ]);
        }
        (None, None) => return Err(usage("give --socket PATH or --port N".into())),
    }
    if args.threads == 0 {
        return Err(usage("--threads: must be at least 1".into()));
    }
    v.extend(["--threads".into(), args.threads.to_string()]);
    v.push(plugin.display().to_string());
    // a device file's path is taken from the working directory
    let device = if Path::new(&args.device).is_file() {
        absolute(Path::new(&args.device)).display().to_string()
    } else {
        args.device.clone()
    };
    v.push(format!("device={device}"));
    v.push(format!("pace={}", args.pace));
    if let Some(out) = &args.out {
        v.push(format!("out={}", absolute(out).display()));
    }
    Ok(v)
}

/// Replaces this process with nbdkit; returns only on failure.
pub fn serve(args: ServeArgs) -> LabResult<()> {
    let plugin = find_plugin(args.plugin.as_deref())?;
    let nbdkit_args = nbdkit_args(&args, &plugin)?;
    let e = std::process::Command::new("nbdkit")
        .args(&nbdkit_args)
        .exec();
    Err(usage(if e.kind() == std::io::ErrorKind::NotFound {
        "nbdkit is not installed (Debian: apt-get install nbdkit; docs/serve.md)".to_string()
    } else {
        format!("starting nbdkit: {e}")
    }))
}
