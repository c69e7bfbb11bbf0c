//! Verifying the files found, a chunk at a time: a first pass learns what a surface's verdict
//! depends on (whether it labels its units; the calls a workdir's frames and record name, and
//! which of them reached a tool, as its frames and traces say), a second pass verifies each
//! unit and reports its findings at once.

use std::io::{self, IsTerminal, Read};
use std::time::Duration;

use fence_surfaces::{
    Finding, JsonlLine, JsonlReader, RecordReader, RecordVerifier, SseReader, StreamFrame,
    StreamVerifier, TraceReader, TraceVerifier, Unit,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::call::Call;
use super::discover::{Discovery, Kind, Problem, Target, open_regular};
use super::manifest::Declared;
use super::report::Reporter;
use super::tally::{Tally, UnitKind};
use crate::exit::Failure;
use crate::input::CHUNK;

/// Inputs this large (the bytes both passes read) get a progress bar, on a terminal.
const LARGE: u64 = 32 * 1024 * 1024;

/// The verifier of one file, after its first pass.
enum Verifier {
    Stream(StreamVerifier),
    Record(RecordVerifier),
    Trace(TraceVerifier),
}

pub(super) fn verify(
    found: &Discovery,
    declared: &[Declared],
    max_line_bytes: usize,
    reporter: &mut Reporter<'_>,
) -> Result<(), Failure> {
    let progress = Progress::new(found);
    let sse = || SseReader::new().with_max_line_bytes(max_line_bytes);
    let record = || RecordReader::new().with_max_line_bytes(max_line_bytes);
    let trace = || TraceReader::new().with_max_line_bytes(max_line_bytes);
    for ((_, targets), declared) in found.groups.iter().zip(declared) {
        let context = &declared.context;
        reporter.workdir(declared.nothing);
        // The first pass, streams and traces before the record: the calls its frames name, and
        // the names its traces say were called as tools, classify the record's lines.
        let mut workdir = context.clone();
        let mut verifiers = Vec::with_capacity(targets.len());
        for target in targets.iter().filter(|target| target.kind == Kind::Stream) {
            let mut verifier = StreamVerifier::new(context.clone());
            let read = read_units(target, &progress, sse(), |unit| {
                if let Unit::Item(frame) = unit {
                    verifier.learn(&frame.value);
                    workdir.learn_call_from_frame(&frame.value.frame);
                }
            });
            verifiers.push((target, read.map(|()| Verifier::Stream(verifier))));
        }
        let mut traces = Vec::new();
        for target in targets.iter().filter(|target| target.kind == Kind::Trace) {
            let read = read_units(target, &progress, trace(), |unit| {
                if let Unit::Item(event) = unit {
                    workdir.learn_call_from_event(&event.value);
                }
            });
            traces.push((target, read));
        }
        for target in targets.iter().filter(|target| target.kind == Kind::Record) {
            let mut verifier = RecordVerifier::new(workdir.clone());
            let read = read_units(target, &progress, record(), |unit| {
                if let Unit::Item(line) = unit {
                    verifier.learn(&line.value);
                }
            });
            verifiers.push((target, read.map(|()| Verifier::Record(verifier))));
        }
        for (target, read) in traces {
            verifiers.push((
                target,
                read.map(|()| Verifier::Trace(TraceVerifier::new(workdir.clone()))),
            ));
        }
        // The second pass, in the order the files were found.
        for target in targets {
            let (_, verifier) = verifiers
                .iter()
                .find(|(t, _)| t.path == target.path)
                .expect("every target has a verifier, or the error that stopped its first pass");
            let verifier = match verifier {
                Ok(verifier) => verifier,
                Err(problem) => {
                    progress.suspend(|| reporter.problem(problem))?;
                    continue;
                }
            };
            let (read, tally) = second_pass(target, verifier, &progress, max_line_bytes, reporter)?;
            let labelled = match verifier {
                Verifier::Stream(verifier) => Some(verifier.is_labelled()),
                Verifier::Record(verifier) => Some(verifier.is_labelled()),
                Verifier::Trace(_) => None,
            };
            match read {
                Ok(()) => {
                    reporter.file(target, tally, labelled);
                    if tally.checked() == 0 {
                        // As a directory with no surface: a CI step pointed at the wrong file,
                        // or a surface in a shape the verifier does not read, must not pass.
                        let problem = Problem {
                            path: target.path.clone(),
                            message: format!(
                                "holds no unit to verify: every one of its {} was blank or passed over (a header, an event or line of a kind the verifier does not read); check the path",
                                target.kind.unit()
                            ),
                        };
                        progress.suspend(|| reporter.problem(&problem))?;
                    }
                }
                Err(problem) => progress.suspend(|| reporter.problem(&problem))?,
            }
        }
    }
    progress.finish();
    Ok(())
}

/// Verifies each unit of one file, reporting its findings: how the read ended, and the units
/// counted.
fn second_pass(
    target: &Target,
    verifier: &Verifier,
    progress: &Progress,
    max_line_bytes: usize,
    reporter: &mut Reporter<'_>,
) -> Result<(Result<(), Problem>, Tally), Failure> {
    let mut tally = Tally::default();
    let mut failed = Ok(());
    let mut each = |findings: Vec<_>, unit_kind: UnitKind, call: &dyn Fn(&Finding) -> Call| {
        tally.count(unit_kind);
        for finding in findings {
            if failed.is_ok() {
                let call = call(&finding);
                failed = progress.suspend(|| reporter.finding(&target.path, &finding, &call));
            }
        }
    };
    let read = match verifier {
        Verifier::Stream(verifier) => read_units(
            target,
            progress,
            SseReader::new().with_max_line_bytes(max_line_bytes),
            |unit| {
                each(
                    verifier.verify(&unit),
                    UnitKind::of(&unit),
                    &|_| match &unit {
                        Unit::Item(frame) => Call::of_frame(&frame.value),
                        _ => Call::default(),
                    },
                );
            },
        ),
        Verifier::Record(verifier) => read_units(
            target,
            progress,
            RecordReader::new().with_max_line_bytes(max_line_bytes),
            |unit| {
                each(
                    verifier.verify(&unit),
                    UnitKind::of(&unit),
                    &|finding| match &unit {
                        Unit::Item(line) => {
                            Call::of_message(&line.value, finding, verifier.context())
                        }
                        _ => Call::default(),
                    },
                );
            },
        ),
        Verifier::Trace(verifier) => read_units(
            target,
            progress,
            TraceReader::new().with_max_line_bytes(max_line_bytes),
            |unit| {
                each(
                    verifier.verify(&unit),
                    UnitKind::of(&unit),
                    &|_| match &unit {
                        Unit::Item(event) => Call::of_event(&event.value),
                        _ => Call::default(),
                    },
                );
            },
        ),
    };
    failed?;
    Ok((read, tally))
}

/// An incremental reader of one surface.
trait UnitReader {
    type Item;
    fn push(&mut self, chunk: &[u8], on_unit: &mut dyn FnMut(Unit<Self::Item>));
    fn finish(self, on_unit: &mut dyn FnMut(Unit<Self::Item>));
}

impl UnitReader for SseReader {
    type Item = StreamFrame;
    fn push(&mut self, chunk: &[u8], on_unit: &mut dyn FnMut(Unit<StreamFrame>)) {
        SseReader::push(self, chunk, on_unit);
    }
    fn finish(self, on_unit: &mut dyn FnMut(Unit<StreamFrame>)) {
        SseReader::finish(self, on_unit);
    }
}

impl<T: JsonlLine> UnitReader for JsonlReader<T> {
    type Item = T;
    fn push(&mut self, chunk: &[u8], on_unit: &mut dyn FnMut(Unit<T>)) {
        JsonlReader::push(self, chunk, on_unit);
    }
    fn finish(self, on_unit: &mut dyn FnMut(Unit<T>)) {
        JsonlReader::finish(self, on_unit);
    }
}

/// Reads `target` a chunk at a time through `reader`, handing every unit to `on_unit`.
fn read_units<R: UnitReader>(
    target: &Target,
    progress: &Progress,
    mut reader: R,
    mut on_unit: impl FnMut(Unit<R::Item>),
) -> Result<(), Problem> {
    let problem = |error: io::Error| Problem {
        path: target.path.clone(),
        message: format!("cannot read: {error}"),
    };
    let mut file = open_regular(&target.path).map_err(problem)?;
    let mut buffer = vec![0; CHUNK];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => {
                reader.push(&buffer[..read], &mut on_unit);
                progress.advance(read);
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(problem(error)),
        }
    }
    reader.finish(&mut on_unit);
    Ok(())
}

/// A progress bar on stderr, for large inputs on a terminal.
struct Progress(Option<ProgressBar>);

impl Progress {
    fn new(found: &Discovery) -> Progress {
        let total: u64 = found.targets().map(|target| 2 * target.size).sum();
        if total < LARGE || !io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "auditing [{bar:32}] {bytes}/{total_bytes} {bytes_per_sec} {eta} left",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress(Some(bar))
    }

    fn advance(&self, bytes: usize) {
        if let Some(bar) = &self.0 {
            bar.inc(bytes as u64);
        }
    }

    /// Runs `print` with the bar out of the way.
    fn suspend<T>(&self, print: impl FnOnce() -> T) -> T {
        match &self.0 {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
