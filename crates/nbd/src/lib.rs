//! `nandlab serve`: an nbdkit plugin exporting a stack's simulated SSD over the Network Block
//! Device protocol (docs/serve.md). nbdkit (the maintained NBD server) handles the protocol,
//! connections and signals; its worker threads call this plugin, which hands every command to
//! one simulator thread ([`sim`]) and blocks until the simulated SSD completes it (in real
//! time, or as soon as simulated).
//!
//! Plugin parameters (`nbdkit ... libnandlab_nbd.so device=… pace=… out=…`):
//! - `device`: an SSD preset, a device file or a stack config (required);
//! - `pace`: `real-time` (default) or `none`;
//! - `out`: a folder for the run's files at shutdown (report.json, metrics.json, config.json,
//!   the CSVs of `nandlab run --out`, and serve.json with the pacing's accuracy).
//!
//! The export supports read, write (FUA native), flush, trim, write-zeroes and multi-conn
//! (one device, one simulator thread: a flush or FUA write is visible to every connection).

pub mod sim;

#[cfg(not(test))]
mod plugin {
    use crate::sim::{Client, Device, Pace, Server as Simulator};
    use nbdkit::{CacheFlags, Error, Flags, FuaFlags, Result, Server, ThreadModel, plugin};
    use std::path::PathBuf;
    use std::sync::Mutex;

    #[derive(Debug, Default)]
    struct Settings {
        device: Option<String>,
        pace: Option<Pace>,
        out: Option<PathBuf>,
    }

    static SETTINGS: Mutex<Settings> = Mutex::new(Settings {
        device: None,
        pace: None,
        out: None,
    });
    /// The device built by `get_ready`, until `after_fork` starts the simulator thread on it.
    static DEVICE: Mutex<Option<Device>> = Mutex::new(None);
    /// The running simulator, the stack it was built from, and the export's size.
    static SIMULATOR: Mutex<Option<(Simulator, nandlab_lab::stack::Stack)>> = Mutex::new(None);
    static SIZE: Mutex<u64> = Mutex::new(0);

    fn error(message: impl std::fmt::Display) -> Error {
        Error::new(libc::EINVAL, message.to_string())
    }

    fn io_error(message: String) -> Error {
        // a range past the end, or page payloads that reached the memory budget: no space
        let errno = if message.contains("beyond")
            || message.contains("capacity")
            || message.contains("memory budget")
        {
            libc::ENOSPC
        } else {
            libc::EIO
        };
        Error::new(errno, message)
    }

    #[derive(Debug)]
    struct Connection {
        client: Client,
    }

    impl Server for Connection {
        fn name() -> &'static str {
            "nandlab"
        }

        fn description() -> Option<&'static str> {
            Some("nandlab's simulated SSD, paced in real time")
        }

        fn config_help() -> Option<&'static str> {
            Some(
                "device=PRESET|FILE   SSD preset, device file or stack config (required)\n\
                 pace=real-time|none  release replies at their simulated completion time (default) or at once\n\
                 out=DIR              write report.json, metrics.json, serve.json at shutdown",
            )
        }

        fn config(key: &str, value: &str) -> Result<()> {
            let mut s = SETTINGS.lock().expect("settings");
            match key {
                "device" => s.device = Some(value.to_string()),
                "pace" => s.pace = Some(value.parse().map_err(error)?),
                "out" => s.out = Some(PathBuf::from(value)),
                other => {
                    return Err(error(format!(
                        "unknown parameter `{other}` (device, pace, out)"
                    )));
                }
            }
            Ok(())
        }

        fn config_complete() -> Result<()> {
            let s = SETTINGS.lock().expect("settings");
            if s.device.is_none() {
                return Err(error("device=PRESET|FILE is required"));
            }
            if let Some(dir) = &s.out {
                std::fs::create_dir_all(dir)
                    .map_err(|e| error(format!("out={}: {e}", dir.display())))?;
                nandlab_lab::output::check_writable_dir(dir).map_err(error)?;
            }
            Ok(())
        }

        fn get_ready() -> Result<()> {
            let name = SETTINGS
                .lock()
                .expect("settings")
                .device
                .clone()
                .expect("checked");
            let device = Device::build(&name).map_err(|e| error(format!("device={name}: {e}")))?;
            *SIZE.lock().expect("size") = device.ssd.logical_capacity_bytes();
            *DEVICE.lock().expect("device") = Some(device);
            Ok(())
        }

        fn after_fork() -> Result<()> {
            let device = DEVICE
                .lock()
                .expect("device")
                .take()
                .ok_or_else(|| error("no device"))?;
            let pace = SETTINGS
                .lock()
                .expect("settings")
                .pace
                .unwrap_or(Pace::RealTime);
            let simulator = Simulator::start(device.ssd, pace);
            *SIMULATOR.lock().expect("simulator") = Some((simulator, device.stack));
            Ok(())
        }

        fn unload() {
            let Some((simulator, stack)) = SIMULATOR.lock().expect("simulator").take() else {
                return;
            };
            let out = SETTINGS.lock().expect("settings").out.clone();
            match simulator.shutdown() {
                Ok(summary) => {
                    let [r, w, z, t, f] = summary.commands;
                    eprintln!(
                        "nandlab serve: {r} reads, {w} writes, {z} write-zeroes, {t} trims, {f} flushes ({} refused) in {:.3} s wall, {:.3} s simulated; replies late p50 {:.1} us, p99 {:.1} us",
                        summary.refused,
                        summary.wall_s,
                        summary.sim_s,
                        summary.lateness_percentile_us(0.5),
                        summary.lateness_percentile_us(0.99)
                    );
                    if let Some(dir) = out {
                        match summary.write(&stack, &dir) {
                            Ok(()) => eprintln!("nandlab serve: wrote {}", dir.display()),
                            Err(e) => eprintln!("nandlab serve: error: {e}"),
                        }
                    }
                }
                Err(e) => eprintln!("nandlab serve: error at shutdown: {e}"),
            }
        }

        fn open(_readonly: bool) -> Result<Box<dyn Server>> {
            let guard = SIMULATOR.lock().expect("simulator");
            let (simulator, _) = guard
                .as_ref()
                .ok_or_else(|| error("the simulator is not running"))?;
            Ok(Box::new(Connection {
                client: simulator.client(),
            }))
        }

        fn thread_model() -> Result<ThreadModel> {
            Ok(ThreadModel::Parallel)
        }

        fn get_size(&self) -> Result<i64> {
            Ok(*SIZE.lock().expect("size") as i64)
        }

        fn can_write(&self) -> Result<bool> {
            Ok(true)
        }
        fn can_flush(&self) -> Result<bool> {
            Ok(true)
        }
        fn can_trim(&self) -> Result<bool> {
            Ok(true)
        }
        fn can_zero(&self) -> Result<bool> {
            Ok(true)
        }
        fn can_fast_zero(&self) -> Result<bool> {
            Ok(false)
        }
        fn can_fua(&self) -> Result<FuaFlags> {
            Ok(FuaFlags::Native)
        }
        fn can_multi_conn(&self) -> Result<bool> {
            Ok(true)
        }
        fn can_cache(&self) -> Result<CacheFlags> {
            Ok(CacheFlags::None)
        }
        fn is_rotational(&self) -> Result<bool> {
            Ok(false)
        }

        fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
            self.client.read(offset, buf).map_err(io_error)
        }

        fn write_at(&self, buf: &[u8], offset: u64, flags: Flags) -> Result<()> {
            self.client
                .write(offset, buf, flags.contains(Flags::FUA))
                .map_err(io_error)
        }

        fn zero(&self, count: u32, offset: u64, flags: Flags) -> Result<()> {
            self.client
                .zero(offset, u64::from(count), flags.contains(Flags::FUA))
                .map_err(io_error)
        }

        fn trim(&self, count: u32, offset: u64, flags: Flags) -> Result<()> {
            self.client
                .trim(offset, u64::from(count), flags.contains(Flags::FUA))
                .map_err(io_error)
        }

        fn flush(&self) -> Result<()> {
            self.client.flush().map_err(io_error)
        }
    }

    plugin!(Connection {
        thread_model,
        config,
        config_complete,
        get_ready,
        after_fork,
        unload,
        write_at,
        zero,
        trim,
        flush,
        can_write,
        can_flush,
        can_trim,
        can_zero,
        can_fast_zero,
        can_fua,
        can_multi_conn,
        can_cache,
        is_rotational
    });
}
