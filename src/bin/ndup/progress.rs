//! A progress bar on stderr for every long phase (reading and signing, candidate pairing, exact
//! verification, index writes), only when stderr is a terminal and the work turns out to be
//! long: it stays hidden for the first second, so quick scans never flash a bar, and pipes and CI
//! logs (not terminals) never get one.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ndup::find::Phase;

/// Work shorter than this shows no bar, unless `NDUP_PROGRESS_DELAY_MS` says otherwise (a test
/// of the bar cannot wait for a long scan).
const SHOW_AFTER: Duration = Duration::from_secs(1);

fn show_after() -> Duration {
    std::env::var("NDUP_PROGRESS_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(SHOW_AFTER, Duration::from_millis)
}

/// The bar, hidden until the work has lasted [`SHOW_AFTER`] (or `NDUP_PROGRESS_DELAY_MS`).
pub struct Bar {
    bar: ProgressBar,
    start: Instant,
    show_after: Duration,
    shown: AtomicBool,
}

impl Bar {
    /// A bar when stderr is a terminal and `quiet` is off; otherwise none.
    pub fn for_stderr(quiet: bool) -> Option<Arc<Bar>> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(spinner());
        let (doing, units) = Phase::Reading.describe();
        bar.set_prefix(doing);
        bar.set_message(units);
        Some(Arc::new(Bar {
            bar,
            start: Instant::now(),
            show_after: show_after(),
            shown: AtomicBool::new(false),
        }))
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Drop for Bar {
    // A run that fails leaves no bar behind its error message.
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl ndup::find::Progress for Bar {
    fn phase(&self, phase: Phase, total: Option<u64>) {
        // Each setter may draw: the prefix, set last, completes a consistent line.
        let (doing, units) = phase.describe();
        match total {
            Some(n) => self.bar.set_length(n),
            None => self.bar.unset_length(),
        }
        self.bar.set_position(0);
        self.bar.set_message(units);
        self.bar.set_style(match total {
            Some(_) => counted(),
            // Only records are counted as they come; the other phases of unknown size (the
            // exact join, sampled candidates) have nothing to count.
            None if phase == Phase::Reading => spinner(),
            None => ProgressStyle::with_template("{spinner} {prefix}, {elapsed}")
                .expect("a valid template"),
        });
        self.bar.set_prefix(doing);
    }

    fn total(&self, units: u64) {
        self.bar.set_length(units);
        self.bar.set_style(counted());
    }

    fn advance(&self, units: u64) {
        self.bar.inc(units);
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() >= self.show_after
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(200));
        }
    }
}

/// A phase whose size is known: a bar, the count and the time left.
fn counted() -> ProgressStyle {
    ProgressStyle::with_template("{prefix} {bar:40} {human_pos}/{human_len} {msg}, {eta} left")
        .expect("a valid template")
}

/// A phase of unknown size: what it has done so far and for how long.
fn spinner() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix}: {human_pos} {msg}, {elapsed}")
        .expect("a valid template")
}
