//! Progress of long runs: a bar on the terminal (hidden when stderr is not a terminal, and only
//! drawn after the first second so short runs print nothing) and the run's [`Control`], which
//! can stop the run.

use crate::control::Control;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// Items consumed between two updates of the bar and the control.
const BATCH: u64 = 256;

/// Wraps an iterator so that consuming it advances a progress bar of `total` items (or a
/// spinner when the total is unknown) and `control`'s count; once `control` is cancelled the
/// wrapper ends (returns `None`) without taking more items from `iter`.
pub fn with_progress<I: Iterator>(
    iter: I,
    total: Option<u64>,
    what: &str,
    control: &Control,
) -> Progress<I> {
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
    control.start(total);
    Progress {
        inner: iter,
        bar,
        control: control.clone(),
        pending: 0,
        ended: false,
        cut_short: false,
    }
}

#[derive(Debug)]
pub struct Progress<I> {
    inner: I,
    bar: ProgressBar,
    control: Control,
    /// Items taken since the last update.
    pending: u64,
    ended: bool,
    cut_short: bool,
}

impl<I> Progress<I> {
    /// Whether the stream ended because the control was cancelled (items were left).
    pub fn cut_short(&self) -> bool {
        self.cut_short
    }

    fn flush(&mut self) {
        self.bar.inc(self.pending);
        self.control.advance(self.pending);
        self.pending = 0;
    }

    fn end(&mut self) {
        if !self.ended {
            self.ended = true;
            self.flush();
            self.control.finish();
            self.bar.finish_and_clear();
        }
    }
}

impl<I: Iterator> Iterator for Progress<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        if self.ended {
            return None;
        }
        if self.control.is_cancelled() {
            self.cut_short = true;
            self.end();
            return None;
        }
        let item = self.inner.next();
        match item {
            Some(_) => {
                self.pending += 1;
                if self.pending == BATCH {
                    // a cancel seen here ends the stream at the next call
                    self.flush();
                }
            }
            None => self.end(),
        }
        item
    }
}

impl<I> Drop for Progress<I> {
    fn drop(&mut self) {
        self.end();
    }
}

/// Progress of a step that reports `(done, total)` itself (the SSD's preconditioning): a bar
/// on stderr and the control's count; the returned callback asks to stop (`Break`) once the
/// control is cancelled.
pub fn step_progress<'c>(
    what: &str,
    control: &'c Control,
) -> impl FnMut(u64, u64) -> std::ops::ControlFlow<()> + 'c {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
    let style =
        ProgressStyle::with_template("{msg} {wide_bar} {human_pos}/{human_len} (eta {eta})")
            .expect("a valid template");
    bar.set_style(style);
    bar.set_message(what.to_string());
    let mut last = 0u64;
    let mut started = false;
    move |done, total| {
        if !started {
            started = true;
            control.start(Some(total));
            bar.set_length(total);
        }
        control.advance(done.saturating_sub(last));
        bar.inc(done.saturating_sub(last));
        last = done;
        if done >= total {
            bar.finish_and_clear();
            control.finish();
        }
        if control.is_cancelled() {
            bar.finish_and_clear();
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    }
}

/// Progress of a count without a known end (statements of a SQL script): a spinner with the
/// count on stderr (a terminal only) and the control's count; the returned callback asks to
/// stop (`Break`) once the control is cancelled. The spinner is cleared when the callback is
/// dropped.
pub fn count_progress<'c>(
    what: &str,
    control: &'c Control,
) -> impl FnMut(u64) -> std::ops::ControlFlow<()> + 'c {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
    let style = ProgressStyle::with_template("{spinner} {msg} {human_pos} ({per_sec})")
        .expect("a valid template");
    bar.set_style(style);
    bar.set_message(what.to_string());
    control.start(None);
    let bar = ClearOnDrop(bar);
    let mut last = 0u64;
    move |done| {
        bar.0.inc(done.saturating_sub(last));
        control.advance(done.saturating_sub(last));
        last = done;
        if control.is_cancelled() {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    }
}

/// A bar that is cleared from the terminal when dropped.
struct ClearOnDrop(ProgressBar);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// A spinner with the elapsed wall time on stderr (a terminal only), drawn by its own thread
/// so that the work it accompanies is untouched (a benchmark's loop); cleared when dropped.
#[derive(Debug)]
pub struct Spinner(ProgressBar);

impl Spinner {
    pub fn new(what: &str) -> Spinner {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("a valid template"),
        );
        bar.set_message(what.to_string());
        bar.enable_steady_tick(Duration::from_millis(250));
        Spinner(bar)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
