//! One caller at a time through the `Core` calls that change what runs (connect, prepare,
//! configure, start, stop, close). Several of them wait with the GIL released (a connect,
//! a prepare, a stop waiting for its ops), so Python threads may call the core meanwhile:
//! the agent's loop harvests, counts and reads the ops in flight while a stop runs on
//! `asyncio.to_thread`. Reads take only the core's state lock for a moment (lib.rs); a
//! change waits here for the one before it, and waits with the GIL released, so the
//! caller holding the gate can always take the GIL back: no deadlock, and no wait longer
//! than the call ahead (each is bounded by its own timeout).

use std::sync::{Condvar, Mutex, PoisonError};

use pyo3::Python;

#[derive(Default)]
pub struct Gate {
    busy: Mutex<bool>,
    free: Condvar,
}

/// The gate is held until this is dropped (also when the call fails or panics).
pub struct Entered<'a>(&'a Gate);

impl Gate {
    /// Wait (with the GIL released) until no other call holds the gate, then hold it.
    pub fn enter(&self, py: Python<'_>) -> Entered<'_> {
        py.allow_threads(|| self.take());
        Entered(self)
    }

    /// Wait until the gate is free and take it (the GIL, if any, released by the caller).
    fn take(&self) {
        let mut busy = self.busy.lock().unwrap_or_else(PoisonError::into_inner);
        while *busy {
            busy = self.free.wait(busy).unwrap_or_else(PoisonError::into_inner);
        }
        *busy = true;
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        *self.0.busy.lock().unwrap_or_else(PoisonError::into_inner) = false;
        self.0.free.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::{Entered, Gate};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Without Python (a test binary cannot link libpython under `extension-module`): the
    /// wait `enter` makes with the GIL released; tests/agents/test_core_threads_units.py
    /// calls the core from Python threads.
    #[test]
    fn one_holder_at_a_time() {
        let gate = Arc::new(Gate::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (gate, inside, most) = (gate.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        gate.take();
                        let _held = Entered(&gate);
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now(); // as a stop waiting for its ops
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }
}
