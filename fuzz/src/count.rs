//! How much a target ran: the operations and cases it executed, printed once when the process
//! exits (libFuzzer exits with `exit`, which runs the handler; a crash does not, and then the
//! count does not matter). `fuzz/run.sh` adds the targets' counts up.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// Operations executed: each attempt of each operation, and each final whole read.
static OPS: AtomicU64 = AtomicU64::new(0);
/// Cases run.
static CASES: AtomicU64 = AtomicU64::new(0);
static REPORT_AT_EXIT: Once = Once::new();

extern "C" {
    /// The C library's `atexit`.
    fn atexit(callback: extern "C" fn()) -> i32;
}

/// Prints the counts; `fuzz/run.sh` looks for the line's first words.
extern "C" fn report() {
    let (ops, cases) = (OPS.load(Ordering::Relaxed), CASES.load(Ordering::Relaxed));
    eprintln!("fuzz ops: {ops} operations in {cases} cases");
}

/// Counts a case, and has the counts printed at exit (registered once).
pub fn case() {
    REPORT_AT_EXIT.call_once(|| {
        // SAFETY: `report` is an `extern "C" fn()` that lives as long as the program and only
        // reads atomics and writes to stderr.
        unsafe {
            atexit(report);
        }
    });
    CASES.fetch_add(1, Ordering::Relaxed);
}

/// Counts an operation.
pub fn op() {
    OPS.fetch_add(1, Ordering::Relaxed);
}
