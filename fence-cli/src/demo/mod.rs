//! `fence demo`.

use std::path::PathBuf;

use crate::exit::{Failure, Status};

/// Runs a scripted agent turn.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where to write the surfaces.
    #[arg(value_name = "DIR", default_value = "fence-demo")]
    dir: PathBuf,
}

pub(crate) fn run(args: &Args) -> Result<Status, Failure> {
    let _ = &args.dir;
    Ok(Status::Clean)
}
