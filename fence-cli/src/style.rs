//! Colours: applied through `anstream`, which strips them when the stream is not a terminal,
//! when `NO_COLOR` is set, or when `--color never` says so.

use anstyle::{AnsiColor, Color, Style};

/// An error's label.
pub(crate) const ERROR: Style = Style::new()
    .bold()
    .fg_color(Some(Color::Ansi(AnsiColor::Red)));
/// A note's label, and a finding that is not an error.
pub(crate) const NOTE: Style = Style::new()
    .bold()
    .fg_color(Some(Color::Ansi(AnsiColor::Yellow)));
/// A clean result.
pub(crate) const GOOD: Style = Style::new()
    .bold()
    .fg_color(Some(Color::Ansi(AnsiColor::Green)));
/// A file name and line, as compilers print them.
pub(crate) const PLACE: Style = Style::new().bold();
/// A heading.
pub(crate) const HEADING: Style = Style::new().bold().underline();
/// Less important text.
pub(crate) const DIM: Style = Style::new().dimmed();
/// A fence's own opening and closing markers.
pub(crate) const FENCE: Style = Style::new()
    .bold()
    .fg_color(Some(Color::Ansi(AnsiColor::Cyan)));
/// A marker the content forged, now neutralised.
pub(crate) const NEUTRALISED: Style = Style::new()
    .bold()
    .fg_color(Some(Color::Ansi(AnsiColor::Black)))
    .bg_color(Some(Color::Ansi(AnsiColor::Yellow)));

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorWhen {
    /// Colour a terminal, unless `NO_COLOR` is set (or `CLICOLOR_FORCE` asks for colour).
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl ColorWhen {
    /// Makes the choice for every stream the process writes.
    pub(crate) fn apply(self) {
        match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        }
        .write_global();
    }
}
