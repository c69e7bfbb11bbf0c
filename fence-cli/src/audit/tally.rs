//! What became of each unit of a file, counted: what the verifier counts and the report prints.

use fence_surfaces::Unit;
use serde::Serialize;

/// How many units of one file were read, skipped and failed.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(crate) struct Tally {
    pub(super) read: usize,
    pub(super) skipped: usize,
    pub(super) failed: usize,
}

impl Tally {
    pub(super) fn count(&mut self, unit: UnitKind) {
        self.read += 1;
        match unit {
            UnitKind::Item => {}
            UnitKind::Skipped => self.skipped += 1,
            UnitKind::Failed => self.failed += 1,
        }
    }

    /// Units read into an item or failed: every unit but those passed over.
    pub(super) fn checked(&self) -> usize {
        self.read - self.skipped
    }

    pub(super) fn add(&mut self, other: Tally) {
        self.read += other.read;
        self.skipped += other.skipped;
        self.failed += other.failed;
    }
}

/// What became of a unit, for the counts.
#[derive(Clone, Copy)]
pub(super) enum UnitKind {
    Item,
    Skipped,
    Failed,
}

impl UnitKind {
    pub(super) fn of<T>(unit: &Unit<T>) -> UnitKind {
        match unit {
            Unit::Item(_) => UnitKind::Item,
            Unit::Failed(_) => UnitKind::Failed,
            _ => UnitKind::Skipped,
        }
    }
}
