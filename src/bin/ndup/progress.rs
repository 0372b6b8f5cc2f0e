//! A progress bar on stderr for phase one, only when stderr is a terminal and the work turns out
//! to be long: it stays hidden for the first second, so quick scans never flash a bar, and pipes
//! and CI logs (not terminals) never get one.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work shorter than this shows no bar.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// The bar, hidden until the work has lasted [`SHOW_AFTER`].
pub struct Bar {
    bar: ProgressBar,
    start: Instant,
    shown: AtomicBool,
}

impl Bar {
    /// A bar when stderr is a terminal and `quiet` is off; otherwise none.
    pub fn for_stderr(quiet: bool) -> Option<Arc<Bar>> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {human_pos} documents, {elapsed}")
                .expect("a valid template"),
        );
        Some(Arc::new(Bar {
            bar,
            start: Instant::now(),
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
    fn total(&self, documents: u64) {
        self.bar.set_length(documents);
        self.bar.set_style(
            ProgressStyle::with_template("{bar:40} {human_pos}/{human_len} documents, {eta} left")
                .expect("a valid template"),
        );
    }

    fn advance(&self, documents: u64) {
        self.bar.inc(documents);
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() >= SHOW_AFTER
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(200));
        }
    }
}
