// Enums a later version will add variants to are `#[non_exhaustive]`: a downstream match
// without a wildcard arm does not compile, so adding a variant is not a breaking change.
use fence_runtime::{Exemption, MarkerKind, ParseError, SourceKind, TaskOrigin};
use fence_surfaces::{Markers, MissingLabel, Status, StateEffect, Surface};

fn source_kind(kind: SourceKind<'_>) -> u8 {
    match kind {
        SourceKind::Tool(_) => 0,
        SourceKind::Task(_) => 1,
        SourceKind::Unknown(_) => 2,
    }
}

fn task_origin(origin: TaskOrigin) -> u8 {
    match origin {
        TaskOrigin::User => 0,
        TaskOrigin::Peer => 1,
        TaskOrigin::Schedule => 2,
        TaskOrigin::Event => 3,
        TaskOrigin::Completion => 4,
        TaskOrigin::System => 5,
    }
}

fn exemption(exemption: Exemption) -> u8 {
    match exemption {
        Exemption::SkillDoc => 0,
        Exemption::DispatchFailure => 1,
        Exemption::Refusal => 2,
        Exemption::HookArtifact => 3,
        Exemption::TrustedTask => 4,
        Exemption::ModelText => 5,
    }
}

fn parse_error(error: ParseError) -> u8 {
    match error {
        ParseError::NoOpener => 0,
        ParseError::SourceNotTerminated => 1,
        ParseError::MissingSeparatorAfterOpener => 2,
        ParseError::NoCloser => 3,
        ParseError::MissingSeparatorBeforeCloser => 4,
        ParseError::TextAfterCloser => 5,
    }
}

fn markers(markers: Markers<'_>) -> u8 {
    match markers {
        Markers::Plain => 0,
        Markers::Block(_) => 1,
        Markers::Malformed(_) => 2,
    }
}

fn surface(surface: Surface) -> u8 {
    match surface {
        Surface::ArtifactStream => 0,
        Surface::Record => 1,
        Surface::Trace => 2,
    }
}

fn missing_label(label: MissingLabel) -> u8 {
    match label {
        MissingLabel::Null => 0,
        MissingLabel::Absent => 1,
    }
}

fn marker_kind(kind: MarkerKind) -> u8 {
    match kind {
        MarkerKind::Opener => 0,
        MarkerKind::Closer => 1,
    }
}

fn status(status: Status) -> u8 {
    match status {
        Status::Ok => 0,
        Status::Error => 1,
    }
}

fn state_effect(effect: StateEffect) -> u8 {
    match effect {
        StateEffect::Read => 0,
        StateEffect::Mutate => 1,
    }
}

fn main() {}
