//! The fencing table is written once, in `fence-mcp/docs/fencing-table.md`, which the crate
//! docs include. The repository's docs show it too, as copies between two marker lines; this
//! test holds each copy to the source, byte for byte. With `UPDATE_FENCING_TABLE=1` it writes
//! the source into every copy instead: read the diff before committing.

use std::path::Path;

const SOURCE: &str = include_str!("../docs/fencing-table.md");
const BEGIN: &str =
    "<!-- fencing-table: begin (a copy of fence-mcp/docs/fencing-table.md: edit that) -->\n";
const END: &str = "<!-- fencing-table: end -->\n";
/// The files that show the table, from the repository's root.
const COPIES: [&str; 2] = ["README.md", "docs/mcp-proxy.md"];

#[test]
fn every_copy_of_the_fencing_table_is_the_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let update = std::env::var_os("UPDATE_FENCING_TABLE").is_some();
    let mut differ = Vec::new();
    for copy in COPIES {
        let path = root.join(copy);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("{copy} cannot be read: {err}"));
        let start = text
            .find(BEGIN)
            .unwrap_or_else(|| panic!("{copy} has no line {BEGIN:?}"))
            + BEGIN.len();
        let end = start
            + text[start..]
                .find(END)
                .unwrap_or_else(|| panic!("{copy} has no line {END:?} after its begin marker"));
        let shown = &text[start..end];
        if shown == SOURCE {
            continue;
        }
        if update {
            let updated = [&text[..start], SOURCE, &text[end..]].concat();
            std::fs::write(&path, updated)
                .unwrap_or_else(|err| panic!("{copy} cannot be written: {err}"));
            continue;
        }
        let line = shown
            .lines()
            .zip(SOURCE.lines())
            .position(|(shown, source)| shown != source)
            .unwrap_or_else(|| shown.lines().count().min(SOURCE.lines().count()));
        differ.push(format!(
            "{copy}:{}",
            text[..start].lines().count() + line + 1
        ));
    }
    assert!(
        differ.is_empty(),
        "the fencing table differs from fence-mcp/docs/fencing-table.md, its one source, at {}. \
         Edit the source, then copy it with \
         `UPDATE_FENCING_TABLE=1 cargo test -p fence-mcp --lib table_copies` and read the diff.",
        differ.join("; "),
    );
}
