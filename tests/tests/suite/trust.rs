//! Task origins and trust: the derivation table, reading headers from the wire, the one path to
//! a sender's trust, and the exact lowercase wire spellings.

use std::str::FromStr;

use fence_runtime::{TaskOrigin, TaskProvenance, TrustClass};

use TaskOrigin::{Completion, Event, Peer, Schedule, System, User};
use TrustClass::{Trusted, Untrusted};

#[test]
fn derive_table() {
    let table = *fence_tests::trust::DERIVE;
    assert_eq!(table.len(), 18);
    for (origin, inherited, trust) in table {
        let provenance = fence_tests::trust::provenance(origin, inherited);
        assert_eq!(
            (provenance.origin(), provenance.trust()),
            (origin, trust),
            "{origin:?} with the sender's {inherited:?}"
        );
        assert_eq!(provenance.is_fenced(), trust == Untrusted);
        if inherited.is_none() {
            assert_eq!(
                TaskProvenance::derive(origin),
                provenance,
                "derive({origin:?}) is the row of a sender that sent nothing"
            );
        }
    }
}

#[test]
fn derive_gives_each_origin_its_own_trust() {
    for &origin in TaskOrigin::ALL {
        let trust = match origin {
            User | Schedule | System => Trusted,
            // A peer or completion is trusted only through `from_authenticated_sender`.
            Event | Peer | Completion => Untrusted,
            _ => panic!("an origin this test does not know: {origin:?}"),
        };
        let provenance = TaskProvenance::derive(origin);
        assert_eq!(
            (provenance.origin(), provenance.trust()),
            (origin, trust),
            "derive({origin:?})"
        );
    }
}

#[test]
fn from_wire_never_yields_a_trusted_task() {
    // (origin header, origin): only `peer` and `completion` can be claimed, and both are
    // untrusted; anything else is an untrusted event.
    let table = [
        (Some("peer"), Peer),
        (Some("completion"), Completion),
        (Some("user"), Event),
        (Some("system"), Event),
        (Some("schedule"), Event),
        (Some("event"), Event),
        (Some("Peer"), Event),
        (Some("PEER"), Event),
        (Some(" peer"), Event),
        (Some("peer "), Event),
        (Some("Completion"), Event),
        (Some(""), Event),
        (Some("operator"), Event),
        (None, Event),
    ];
    for (origin_header, origin) in table {
        let provenance = TaskProvenance::from_wire(origin_header);
        assert_eq!(
            (provenance.origin(), provenance.trust()),
            (origin, Untrusted),
            "from_wire({origin_header:?})"
        );
        assert!(provenance.is_fenced());
    }
}

#[test]
fn only_an_authenticated_peer_or_completion_inherits_its_senders_trust() {
    for &origin in TaskOrigin::ALL {
        for sender in [None, Some(Trusted), Some(Untrusted)] {
            let provenance = TaskProvenance::from_authenticated_sender(origin, sender);
            let expected = match origin {
                Peer | Completion => (origin, sender.unwrap_or(Untrusted)),
                // Even an authenticated sender cannot claim to be the operator.
                User | Schedule | System | Event => (Event, Untrusted),
                _ => panic!("an origin this test does not know: {origin:?}"),
            };
            assert_eq!(
                (provenance.origin(), provenance.trust()),
                expected,
                "from_authenticated_sender({origin:?}, {sender:?})"
            );
        }
    }
}

/// The other half of "only": every other public function that makes a provenance (the test
/// below reads which there are from the crate's source) never makes a `peer` or `completion`
/// task trusted, whatever it is given.
#[test]
fn no_other_public_function_makes_a_trusted_peer_task() {
    let inherits = |provenance: TaskProvenance| {
        matches!(provenance.origin(), Peer | Completion) && provenance.trust() == Trusted
    };
    for &origin in TaskOrigin::ALL {
        assert!(
            !inherits(TaskProvenance::derive(origin)),
            "derive({origin:?})"
        );
    }
    let mut headers: Vec<String> = TaskOrigin::ALL.iter().map(ToString::to_string).collect();
    for header in headers.clone() {
        headers.extend([
            header.to_uppercase(),
            format!("{header} "),
            format!("{header};trust=trusted"),
            format!("{header}, trusted"),
            format!("{header}:trusted"),
        ]);
    }
    headers.extend(["trusted", "untrusted", "", "peer\0"].map(String::from));
    for header in headers.iter().map(|h| Some(h.as_str())).chain([None]) {
        assert!(
            !inherits(TaskProvenance::from_wire(header)),
            "from_wire({header:?})"
        );
    }
}

#[test]
fn origin_wire_spellings_round_trip() {
    let spellings = [
        (User, "user"),
        (Peer, "peer"),
        (Schedule, "schedule"),
        (Event, "event"),
        (Completion, "completion"),
        (System, "system"),
    ];
    assert_eq!(
        TaskOrigin::ALL,
        spellings.map(|(origin, _)| origin).as_slice()
    );
    for (origin, wire) in spellings {
        assert_eq!(origin.as_str(), wire);
        assert_eq!(origin.to_string(), wire);
        assert_eq!(wire.parse::<TaskOrigin>(), Ok(origin));
        assert_eq!(TaskOrigin::from_str(wire), Ok(origin));
    }
}

#[test]
fn trust_wire_spellings_round_trip() {
    for (trust, wire) in [(Trusted, "trusted"), (Untrusted, "untrusted")] {
        assert_eq!(trust.as_str(), wire);
        assert_eq!(trust.to_string(), wire);
        assert_eq!(wire.parse::<TrustClass>(), Ok(trust));
        assert_eq!(TrustClass::from_str(wire), Ok(trust));
    }
}

#[test]
fn other_origin_spellings_are_rejected() {
    for wire in [
        "User",
        "USER",
        "Peer",
        "pEER",
        "SCHEDULE",
        "Event",
        "COMPLETION",
        "System",
        " peer",
        "peer ",
        "peer\n",
        "",
        "task:peer",
        "operator",
        "\u{17F}ystem",
    ] {
        let err = wire.parse::<TaskOrigin>().unwrap_err();
        assert_eq!(err.value(), wire);
    }
    assert_eq!(
        "Peer".parse::<TaskOrigin>().unwrap_err().to_string(),
        "unknown task origin `Peer`; expected one of user, peer, schedule, event, completion, system"
    );
    assert_eq!(
        "peer\n".parse::<TaskOrigin>().unwrap_err().to_string(),
        "unknown task origin `peer\\n`; expected one of user, peer, schedule, event, completion, system"
    );
}

#[test]
fn other_trust_spellings_are_rejected() {
    for wire in [
        "Trusted",
        "TRUSTED",
        "Untrusted",
        "UNTRUSTED",
        " trusted",
        "trusted ",
        "",
        "true",
        "yes",
    ] {
        let err = wire.parse::<TrustClass>().unwrap_err();
        assert_eq!(err.value(), wire);
    }
    assert_eq!(
        "TRUSTED".parse::<TrustClass>().unwrap_err().to_string(),
        "unknown trust class `TRUSTED`; expected trusted or untrusted"
    );
}

/// Every public function of fence-runtime's source whose result holds a `TaskProvenance`, as
/// `Type::function`, and whether it takes a `TrustClass`; every trait implemented for
/// `TaskProvenance` by hand, and every trait it derives. Read from the crate's own source, so
/// that a new way to make a provenance fails the test below until the test checks it too.
#[derive(Debug, Default)]
struct Constructors {
    functions: Vec<(String, bool)>,
    trait_impls: Vec<String>,
    derives: Vec<String>,
    authenticated_calls: Vec<String>,
}

/// Whether `ty` names any of `idents` (`Self` included when `self_ty` is one of them).
fn mentions(ty: &syn::Type, idents: &[&str]) -> bool {
    struct Finder<'a> {
        idents: &'a [&'a str],
        found: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for Finder<'_> {
        fn visit_ident(&mut self, ident: &'ast syn::Ident) {
            self.found |= self.idents.iter().any(|name| ident == name);
        }
    }
    let mut finder = Finder {
        idents,
        found: false,
    };
    syn::visit::visit_type(&mut finder, ty);
    finder.found
}

fn last_ident(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn is_public(vis: &syn::Visibility) -> bool {
    matches!(vis, syn::Visibility::Public(_))
}

impl Constructors {
    /// The function `sig` of `owner` (an impl's self type, or the file for a free function).
    fn function(&mut self, owner: &str, self_ty: Option<&str>, sig: &syn::Signature) {
        let syn::ReturnType::Type(_, output) = &sig.output else {
            return;
        };
        let provenance: &[&str] = if self_ty == Some("TaskProvenance") {
            &["TaskProvenance", "Self"]
        } else {
            &["TaskProvenance"]
        };
        if !mentions(output, provenance) {
            return;
        }
        let takes_trust = sig.inputs.iter().any(|input| match input {
            syn::FnArg::Typed(arg) => mentions(&arg.ty, &["TrustClass"]),
            syn::FnArg::Receiver(_) => false,
        });
        self.functions
            .push((format!("{owner}::{}", sig.ident), takes_trust));
    }
}

impl<'ast> syn::visit::Visit<'ast> for Constructors {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if is_public(&item.vis) {
            self.function("(free)", None, &item.sig);
        }
        syn::visit::visit_item_fn(self, item);
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let self_ty = last_ident(&item.self_ty).unwrap_or_default();
        if self_ty == "TaskProvenance"
            && let Some((_, trait_path, _)) = &item.trait_
        {
            let name = trait_path.segments.last().map(|s| s.ident.to_string());
            self.trait_impls.push(name.unwrap_or_default());
        }
        for impl_item in &item.items {
            if let syn::ImplItem::Fn(function) = impl_item {
                // A trait's functions are as public as the trait.
                if item.trait_.is_some() || is_public(&function.vis) {
                    self.function(&self_ty, Some(&self_ty), &function.sig);
                }
            }
        }
        syn::visit::visit_item_impl(self, item);
    }

    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        if item.ident == "TaskProvenance" {
            for attr in item.attrs.iter().filter(|a| a.path().is_ident("derive")) {
                attr.parse_nested_meta(|meta| {
                    let name = meta.path.segments.last().map(|s| s.ident.to_string());
                    self.derives.push(name.unwrap_or_default());
                    Ok(())
                })
                .expect("a derive list");
            }
        }
        syn::visit::visit_item_struct(self, item);
    }

    fn visit_expr_path(&mut self, expr: &'ast syn::ExprPath) {
        if expr
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "from_authenticated_sender")
        {
            let path: Vec<_> = expr
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            self.authenticated_calls.push(path.join("::"));
        }
        syn::visit::visit_expr_path(self, expr);
    }
}

/// fence-runtime's source, every `.rs` file under `src/`, read as code (doc comments and doc
/// examples are attributes, not items, so they are not counted).
fn runtime_constructors() -> Constructors {
    fn walk(dir: &std::path::Path, found: &mut Constructors) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let source = std::fs::read_to_string(&path).unwrap();
                let file = syn::parse_file(&source)
                    .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
                syn::visit::Visit::visit_file(found, &file);
            }
        }
    }
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fence-runtime/src");
    let mut found = Constructors::default();
    walk(&src, &mut found);
    found
}

/// The claim the trust rules rest on, checked where it can break: no public function but
/// `from_authenticated_sender` takes a sender's trust, and nothing else makes a provenance.
/// A new constructor, a trait that makes one (`Default`, `From`, `Deserialize`, …), or a
/// function of the crate that routes a sender's trust fails here; the trybuild case
/// `ui-tests/tests/fail/runtime/derive-with-a-senders-trust.rs` shows the call that used to.
#[test]
fn from_authenticated_sender_is_the_only_public_function_that_takes_a_senders_trust() {
    let found = runtime_constructors();
    let mut functions = found.functions.clone();
    functions.sort();
    assert_eq!(
        functions,
        [
            ("TaskProvenance::derive".to_owned(), false),
            ("TaskProvenance::from_authenticated_sender".to_owned(), true),
            ("TaskProvenance::from_wire".to_owned(), false),
        ],
        "the public functions that make a TaskProvenance, and whether each takes a TrustClass: \
         a new one must be checked by `no_other_public_function_makes_a_trusted_peer_task` too"
    );
    assert_eq!(
        found.trait_impls,
        Vec::<String>::new(),
        "traits implemented for TaskProvenance by hand"
    );
    assert_eq!(
        found.derives,
        ["Clone", "Copy", "Debug", "PartialEq", "Eq", "Hash"],
        "traits TaskProvenance derives: none of them may make one from anything but another"
    );
    assert_eq!(
        found.authenticated_calls,
        Vec::<String>::new(),
        "fence-runtime calls from_authenticated_sender itself: every call must be the user's own"
    );
}
