//! What an audit is told a runtime declares: its skills and its tools, from `--manifest FILE`,
//! or from a manifest found beside the surfaces, and from `--skills` and `--tools`.

use std::path::{Path, PathBuf};

use fence_surfaces::VerifyContext;
use serde::{Deserialize, Serialize};

use super::discover::Problem;
use crate::exit::Failure;

/// The names a manifest is found under in a workdir, the first found first. `fence.json` is
/// ours; `manifest.json` is what `fence demo` writes, and a name other tools use too, so one
/// that is not a manifest is passed over rather than refused.
pub(crate) const NAMES: [&str; 2] = ["fence.json", "manifest.json"];

/// The declarations of a manifest file.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    #[serde(default)]
    pub(crate) skills: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tools: Option<Vec<String>>,
}

impl Manifest {
    /// Reads a manifest file.
    pub(crate) fn read(path: &Path) -> Result<Manifest, Failure> {
        let bytes = std::fs::read(path).map_err(|error| crate::input::cannot_read(path, &error))?;
        serde_json::from_slice(&bytes)
            .map_err(|error| Failure::trouble(not_a_manifest(path, &error)))
    }

    /// The verification context the manifest declares, with what the flags add.
    pub(crate) fn context(&self, flags: &Manifest) -> VerifyContext {
        let skills = self.skills.iter().chain(&flags.skills).cloned();
        let context = VerifyContext::new().with_skills(skills);
        match (&self.tools, &flags.tools) {
            (None, None) => context,
            (tools, more) => context.with_tools(tools.iter().chain(more).flatten().cloned()),
        }
    }

    fn is_empty(&self) -> bool {
        self.skills.is_empty() && self.tools.is_none()
    }
}

/// Why `path` is refused as a manifest, and what one looks like.
fn not_a_manifest(path: &Path, error: &serde_json::Error) -> String {
    format!(
        "{} is not a manifest: {error}; write {{\"skills\": [\"name\", …], \"tools\": [\"name\", …]}}",
        path.display()
    )
}

/// Where a workdir's declarations came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// `--manifest FILE`.
    Given(PathBuf),
    /// Found beside the surfaces, or in a folder above them that was audited.
    Found(PathBuf),
    /// No manifest: only the flags declare anything.
    None,
}

/// What one workdir declares, and where that came from.
#[derive(Debug)]
pub(crate) struct Declared {
    pub(crate) origin: Origin,
    pub(crate) context: VerifyContext,
    /// Nothing is declared: no manifest and no flag. A skill's doc then reads as an unfenced
    /// tool result, and a failed call to a tool that does not exist as a failed tool.
    pub(crate) nothing: bool,
}

/// How an audit learns its declarations.
#[derive(Debug)]
pub(crate) enum Declarations {
    /// `--manifest FILE` for every workdir, never looked for; the flags added.
    Given {
        path: PathBuf,
        manifest: Manifest,
        flags: Manifest,
    },
    /// Each workdir's own manifest, looked for under [`NAMES`], with the flags added.
    Found { flags: Manifest },
}

impl Declarations {
    /// What the workdir `dir` declares, found under the audited `roots` (the directories given).
    /// A manifest that cannot be read is a problem; a `manifest.json` that is not a manifest is
    /// passed over, with a note.
    pub(crate) fn of(
        &self,
        dir: &Path,
        roots: &[PathBuf],
        problems: &mut Vec<Problem>,
        notes: &mut Vec<String>,
    ) -> Declared {
        let flags = match self {
            Declarations::Given {
                path,
                manifest,
                flags,
            } => {
                return Declared {
                    origin: Origin::Given(path.clone()),
                    context: manifest.context(flags),
                    nothing: false,
                };
            }
            Declarations::Found { flags } => flags,
        };
        for folder in folders(dir, roots) {
            for name in NAMES {
                let path = folder.join(name);
                let Ok(bytes) = std::fs::read(&path) else {
                    continue;
                };
                match serde_json::from_slice::<Manifest>(&bytes) {
                    Ok(manifest) => {
                        return Declared {
                            context: manifest.context(flags),
                            origin: Origin::Found(path),
                            nothing: false,
                        };
                    }
                    Err(error) if name == NAMES[0] => {
                        let message = not_a_manifest(&path, &error);
                        problems.push(Problem { path, message });
                    }
                    Err(error) => {
                        let note = format!(
                            "{} is not a fence manifest ({error}): passed over",
                            path.display()
                        );
                        if !notes.contains(&note) {
                            notes.push(note);
                        }
                    }
                }
            }
        }
        Declared {
            origin: Origin::None,
            context: Manifest::default().context(flags),
            nothing: flags.is_empty(),
        }
    }
}

/// Where a workdir's manifest is looked for, nearest first: the workdir, then each folder
/// above it up to the audited directory it was found in.
fn folders<'a>(dir: &'a Path, roots: &'a [PathBuf]) -> impl Iterator<Item = &'a Path> {
    let mut within = true;
    dir.ancestors().take_while(move |folder| {
        let this = within;
        // The audited directory itself is the last folder looked in.
        within = !roots.iter().any(|root| root.as_path() == *folder)
            && roots.iter().any(|root| folder.starts_with(root));
        this
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_is_looked_for_up_to_the_audited_directory_and_no_further() {
        let roots = [PathBuf::from("runs")];
        let found: Vec<_> = folders(Path::new("runs/a/b"), &roots).collect();
        assert_eq!(
            found,
            [
                Path::new("runs/a/b"),
                Path::new("runs/a"),
                Path::new("runs")
            ]
        );
        // A file given by itself: its own folder only.
        let found: Vec<_> = folders(Path::new("elsewhere/x"), &roots).collect();
        assert_eq!(found, [Path::new("elsewhere/x")]);
        let found: Vec<_> = folders(Path::new("runs"), &roots).collect();
        assert_eq!(found, [Path::new("runs")]);
    }
}
