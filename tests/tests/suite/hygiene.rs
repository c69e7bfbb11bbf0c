//! The expansions compile next to a user's own `Result`, `Option`, `Some`, `None`, `Ok`, `Err`,
//! `String`, `Box` and `mod core`, under `deny(warnings, unused_qualifications)` and clippy's
//! pedantic lints (enforced when CI runs clippy over the tests).
#![deny(warnings, unused_qualifications, clippy::pedantic)]

mod hostile {
    #![allow(dead_code, clippy::upper_case_acronyms)]

    use fence_runtime::{Fenced, TaskProvenance, fence_boundary};

    struct Result;
    struct Option;
    struct Some;
    struct None;
    struct Ok;
    struct Err;
    struct String;
    struct Box;
    struct Vec;
    mod core {}
    mod alloc {}
    mod fmt {}

    #[derive(Debug, serde::Serialize, Fenced)]
    pub(crate) struct Json {
        pub(crate) n: u8,
    }

    #[derive(Debug, Fenced)]
    #[fence(display, tool = "shown")]
    pub(crate) struct Shown(pub(crate) u8);

    impl ::std::fmt::Display for Shown {
        fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
            write!(f, "shown {}", self.0)
        }
    }

    #[derive(Debug, Fenced)]
    #[fence(task)]
    pub(crate) struct Task<'a> {
        #[fence(provenance)]
        pub(crate) provenance: TaskProvenance,
        #[fence(content)]
        pub(crate) body: &'a str,
    }

    #[derive(Debug, Fenced)]
    pub(crate) enum Either<T> {
        Left(#[fence(content)] T),
        Right {
            #[fence(content)]
            text: &'static str,
        },
    }

    #[fence_boundary]
    pub(crate) fn plain() -> &'static str {
        "plain"
    }

    #[fence_boundary(tool = "fallible")]
    pub(crate) fn fallible(fail: bool) -> ::std::result::Result<Json, &'static str> {
        if fail {
            return ::std::result::Result::Err("failed");
        }
        ::std::result::Result::Ok(Json { n: 1 })
    }

    #[fence_boundary]
    pub(crate) async fn later() -> Shown {
        Shown(2)
    }

    #[fence_boundary(task)]
    pub(crate) fn task(provenance: TaskProvenance) -> Task<'static> {
        Task {
            provenance,
            body: "task body",
        }
    }
}

use fence_runtime::{ModelContent, Source, TaskOrigin, TaskProvenance, ToolOutput, fence_value};

#[test]
fn expansions_ignore_the_users_names() {
    assert_eq!(
        hostile::plain().content().as_str(),
        "<untrusted-content source=tool:plain>\nplain\n</untrusted-content>"
    );
    let failed = hostile::fallible(true);
    assert!(failed.is_error());
    assert_eq!(
        failed.content().as_str(),
        "<untrusted-content source=tool:fallible>\nfailed\n</untrusted-content>"
    );
    assert_eq!(
        hostile::fallible(false).content().as_str(),
        "<untrusted-content source=tool:fallible>\n{\"n\":1}\n</untrusted-content>"
    );
    let later = futures_lite_block_on(hostile::later());
    assert_eq!(
        later.content().as_str(),
        "<untrusted-content source=tool:shown>\nshown 2\n</untrusted-content>"
    );
    assert_eq!(
        ToolOutput::from(hostile::Shown(3)).content().fence_source(),
        Some("tool:shown")
    );
    let task: ModelContent = hostile::task(TaskProvenance::derive(TaskOrigin::Event));
    assert_eq!(
        task.as_str(),
        "<untrusted-content source=task:event>\ntask body\n</untrusted-content>"
    );
    let left = fence_value(&Source::tool("e"), &hostile::Either::Left("l")).unwrap();
    assert_eq!(left.content(), "l");
    let right = fence_value(
        &Source::tool("e"),
        &hostile::Either::<&str>::Right { text: "r" },
    )
    .unwrap();
    assert_eq!(right.content(), "r");
}

fn futures_lite_block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}
