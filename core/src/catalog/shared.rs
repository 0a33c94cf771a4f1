//! A catalog's one machine as a host shares it: the host's catalog handle reads it, exactly one
//! driver takes it, its retry jitter is seeded from the process's randomness unless the driver
//! chooses a seed, and its lock survives a panic. The Python and Node bindings hold their catalogs
//! this way (each decided these three on its own before).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::{CatalogError, RefreshConfig, Refresher};

/// A seed for a machine's retry jitter from the process's hash randomness (and the time): what
/// every host passes unless it chooses one ([`Refresher::new`]).
pub fn process_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

/// One catalog's [`Refresher`], shared by a host's handles (put it in an `Arc`): any handle reads
/// it under [`lock`](Self::lock), and one driver [`claim`](Self::claim)s it.
#[derive(Debug)]
pub struct SharedRefresher {
    machine: Mutex<Refresher>,
    driven: AtomicBool,
}

impl SharedRefresher {
    /// A machine over a new, empty catalog with `config`, seeded by [`process_seed`].
    pub fn new(config: RefreshConfig) -> SharedRefresher {
        SharedRefresher { machine: Mutex::new(Refresher::new(config, process_seed())), driven: AtomicBool::new(false) }
    }

    /// The machine, locked. A lock poisoned by a panic is still sound: every update of the machine
    /// is a sequence of plain assignments, so it is taken as it is.
    pub fn lock(&self) -> MutexGuard<'_, Refresher> {
        self.machine.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The one driver takes the machine (seeding its retry jitter with `seed` when given: tests
    /// pass a constant, so every retry time is exact). A second claim is
    /// [`CatalogError::AlreadyDriven`] and changes nothing: two drivers would each perform the
    /// machine's actions.
    pub fn claim(&self, seed: Option<u64>) -> Result<(), CatalogError> {
        if self.driven.swap(true, Ordering::SeqCst) {
            return Err(CatalogError::AlreadyDriven);
        }
        if let Some(seed) = seed {
            self.lock().reseed(seed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_driver_and_a_lock_a_panic_does_not_poison() {
        let shared = std::sync::Arc::new(SharedRefresher::new(RefreshConfig::default()));
        assert_eq!(shared.claim(Some(7)), Ok(()));
        assert_eq!(shared.claim(None), Err(CatalogError::AlreadyDriven));
        let poisoner = std::sync::Arc::clone(&shared);
        let _ = std::thread::spawn(move || {
            let _guard = poisoner.lock();
            panic!("a panic while the machine is locked");
        })
        .join();
        shared.lock().add_server("a");
        assert!(shared.lock().catalog().status("a", std::time::Duration::ZERO).is_ok());
    }
}
