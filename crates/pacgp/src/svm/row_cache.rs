//! The SMO solver's LRU cache of signed kernel rows `Q_i·` (libsvm's `Cache`): rows computed
//! on the active set are valid until it shrinks again; complete rows stay valid.

use std::sync::Arc;

use super::Row;

/// LRU cache of signed rows `Q_i·` (entries valid for the indices active when computed).
pub(super) struct Cache {
    rows: Vec<Option<(Row, u64, bool)>>, // row, shrink epoch, complete
    last_used: Vec<u64>,
    clock: u64,
    count: usize,
    pub(super) capacity: usize,
}

impl Cache {
    pub(super) fn new(n: usize, cache_mb: f64) -> Self {
        let bytes = cache_mb * 1024.0 * 1024.0;
        let capacity = ((bytes / (8.0 * n.max(1) as f64)) as usize).max(2);
        Self {
            rows: vec![None; n],
            last_used: vec![0; n],
            clock: 0,
            count: 0,
            capacity,
        }
    }

    pub(super) fn lookup(&mut self, i: usize, epoch: u64, need_full: bool) -> Option<Row> {
        self.clock += 1;
        match &self.rows[i] {
            Some((r, e, full)) if *full || (!need_full && *e == epoch) => {
                self.last_used[i] = self.clock;
                Some(Arc::clone(r))
            }
            _ => None,
        }
    }

    pub(super) fn insert(&mut self, i: usize, row: Row, epoch: u64, full: bool) {
        if self.rows[i].is_none() {
            if self.count >= self.capacity {
                self.evict();
            }
            self.count += 1;
        }
        self.rows[i] = Some((row, epoch, full));
        self.last_used[i] = self.clock;
    }

    fn evict(&mut self) {
        let victim = (0..self.rows.len())
            .filter(|&i| self.rows[i].is_some())
            .min_by_key(|&i| self.last_used[i]);
        if let Some(v) = victim {
            self.rows[v] = None;
            self.count -= 1;
        }
    }
}
