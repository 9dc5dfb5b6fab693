//! Progress bars on the terminal for long runs (hidden when stderr is not a terminal, and only
//! drawn after the first second so short runs print nothing).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// Wraps an iterator so that consuming it advances a progress bar of `total` items (or a
/// spinner when the total is unknown).
pub fn with_progress<I: Iterator>(iter: I, total: Option<u64>, what: &str) -> Progress<I> {
    let bar = match total {
        Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr_with_hz(4)),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4)),
    };
    let style = ProgressStyle::with_template(
        "{msg} {wide_bar} {human_pos}/{human_len} ({per_sec}, eta {eta})",
    )
    .expect("a valid template");
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_secs(1));
    Progress {
        inner: iter,
        bar,
        pending: 0,
    }
}

#[derive(Debug)]
pub struct Progress<I> {
    inner: I,
    bar: ProgressBar,
    pending: u64,
}

impl<I: Iterator> Iterator for Progress<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let item = self.inner.next();
        self.pending += 1;
        if self.pending == 4096 || item.is_none() {
            self.bar.inc(self.pending);
            self.pending = 0;
        }
        if item.is_none() {
            self.bar.finish_and_clear();
        }
        item
    }
}

impl<I> Drop for Progress<I> {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
