//! A progress bar on stderr for every long phase (reading and signing, candidate pairing, exact
//! verification, index writes), only when stderr is a terminal and the work turns out to be
//! long: it stays hidden for the first second, so quick scans never flash a bar, and pipes and CI
//! logs (not terminals) never get one.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
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
    /// The current phase's bar: each phase gets a new one (see `phase`).
    bar: RwLock<ProgressBar>,
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
        Some(Arc::new(Bar {
            bar: RwLock::new(hidden_bar(Phase::Reading, None)),
            start: Instant::now(),
            show_after: show_after(),
            shown: AtomicBool::new(false),
        }))
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.current().finish_and_clear();
    }

    /// The current phase's bar (a handle: the bar itself is shared).
    fn current(&self) -> ProgressBar {
        self.bar.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for Bar {
    // A run that fails leaves no bar behind its error message.
    fn drop(&mut self) {
        self.current().finish_and_clear();
    }
}

impl ndup::find::Progress for Bar {
    fn phase(&self, phase: Phase, total: Option<u64>) {
        // A new bar, set up while hidden: every setter of a visible bar draws, and changing
        // the length, position, message and prefix one by one drew frames mixing two phases
        // (`reading 0/18 bands`). The old bar clears its line before the new one draws there.
        let next = hidden_bar(phase, total);
        let mut bar = self.bar.write().unwrap_or_else(|e| e.into_inner());
        bar.finish_and_clear();
        if self.shown.load(Ordering::Relaxed) {
            show(&next);
        }
        *bar = next;
    }

    fn total(&self, units: u64) {
        let bar = self.current();
        // The style first: it does not draw, and the spinner's frame shows no length.
        bar.set_style(counted());
        bar.set_length(units);
    }

    fn advance(&self, units: u64) {
        let bar = self.bar.read().unwrap_or_else(|e| e.into_inner());
        bar.inc(units);
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() >= self.show_after
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            show(&bar);
        }
    }
}

/// A hidden bar for `phase`, of `total` units when that is known.
fn hidden_bar(phase: Phase, total: Option<u64>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden());
    bar.set_style(match total {
        Some(_) => counted(),
        // Only records are counted as they come; the other phases of unknown size (the exact
        // join, sampled candidates) have nothing to count.
        None if phase == Phase::Reading => spinner(),
        None => {
            ProgressStyle::with_template("{spinner} {prefix}, {elapsed}").expect("a valid template")
        }
    });
    let (doing, units) = phase.describe();
    bar.set_prefix(doing);
    bar.set_message(units);
    bar
}

/// Draws `bar` on stderr from now on.
fn show(bar: &ProgressBar) {
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.enable_steady_tick(Duration::from_millis(200));
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
