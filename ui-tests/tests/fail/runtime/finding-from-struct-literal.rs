// `Finding` and `Location` will grow fields: they are built with `new`, not a struct literal.
use fence_surfaces::{Finding, FindingKind, Location, Surface};

fn main() {
    let location = Location {
        surface: Surface::Trace,
        line: 1,
        frame_id: None,
        part: None,
    };
    let _finding = Finding {
        location,
        kind: FindingKind::UnknownRole { role: "bot".into() },
    };
}
