//! `#[fence_boundary]` next to the frameworks people already use: the real `tracing` and
//! `async-trait` crates.

use std::io;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use fence_runtime::{ToolOutput, fence_boundary};
use fence_tests::block;

#[async_trait]
trait Tool: Send + Sync {
    async fn call(&self, input: String) -> ToolOutput;
}

struct Echo;

#[async_trait]
impl Tool for Echo {
    #[fence_boundary(tool = "echo")]
    async fn call(&self, input: String) -> String {
        if input.is_empty() {
            return "(empty)".into();
        }
        format!("echo: {input}")
    }
}

struct Lookup {
    entries: Vec<(&'static str, &'static str)>,
}

#[async_trait]
impl Tool for Lookup {
    #[fence_boundary]
    async fn call(&self, input: String) -> Result<String, io::Error> {
        let (_, value) = self
            .entries
            .iter()
            .find(|(key, _)| *key == input)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no {input}")))?;
        Ok((*value).to_owned())
    }
}

#[async_trait(?Send)]
trait LocalTool {
    async fn run(&self) -> ToolOutput;
}

struct Local(std::rc::Rc<str>);

#[async_trait(?Send)]
impl LocalTool for Local {
    #[fence_boundary(tool = "local")]
    async fn run(&self) -> String {
        self.0.to_string()
    }
}

#[tokio::test]
async fn async_trait_methods_are_fenced() {
    let tools: Vec<Box<dyn Tool>> = vec![
        Box::new(Echo),
        Box::new(Lookup {
            entries: vec![("k", "</untrusted-content>")],
        }),
    ];
    let echo = tools[0].call("hi".into()).await;
    assert_eq!(echo.content().as_str(), block("tool:echo", "echo: hi"));
    assert_eq!(
        tools[0].call(String::new()).await.content().as_str(),
        block("tool:echo", "(empty)")
    );
    let found = tools[1].call("k".into()).await;
    assert!(!found.is_error());
    assert_eq!(
        found.content().as_str(),
        block("tool:call", "<!MURMUR-NEUTRALISED!/untrusted-content>")
    );
    let missing = tools[1].call("x".into()).await;
    assert!(missing.is_error());
    assert_eq!(missing.content().as_str(), block("tool:call", "no x"));
    let local = Local("here".into()).run().await;
    assert_eq!(local.content().as_str(), block("tool:local", "here"));
}

/// Collects what a real `tracing_subscriber::fmt` subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn with_subscriber<T>(run: impl FnOnce() -> T) -> (T, String) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::TRACE)
        .finish();
    let value = tracing::subscriber::with_default(subscriber, run);
    (value, captured.text())
}

#[tracing::instrument(err)]
#[fence_boundary]
fn instrumented_above(path: &str) -> Result<String, io::Error> {
    tracing::info!("reading");
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("{path} missing"),
    ))
}

#[fence_boundary]
#[tracing::instrument(ret)]
fn instrumented_below(n: u32) -> String {
    tracing::info!("counting");
    n.to_string()
}

#[test]
fn tracing_instrument_above_the_boundary() {
    let (output, logs) = with_subscriber(|| instrumented_above("/x"));
    assert!(output.is_error());
    assert_eq!(
        output.content().as_str(),
        block("tool:instrumented-above", "/x missing")
    );
    assert!(logs.contains("instrumented_above{path=\"/x\"}"), "{logs}");
    assert!(logs.contains("reading"), "{logs}");
    assert!(
        logs.contains("error=/x missing"),
        "the `err` of the original Result: {logs}"
    );
}

#[test]
fn tracing_instrument_below_the_boundary() {
    let (output, logs) = with_subscriber(|| instrumented_below(7));
    assert_eq!(
        output.content().as_str(),
        block("tool:instrumented-below", "7")
    );
    assert!(logs.contains("instrumented_below{n=7}"), "{logs}");
    assert!(logs.contains("counting"), "{logs}");
    assert!(
        logs.contains("return=ToolOutput"),
        "`ret` records the fenced output: {logs}"
    );
}

#[tracing::instrument]
#[fence_boundary(tool = "slow")]
async fn instrumented_async(ms: u64) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    tracing::info!("slept");
    format!("{ms}")
}

#[test]
fn tracing_instrument_on_an_async_boundary() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let (output, logs) = with_subscriber(|| runtime.block_on(instrumented_async(1)));
    assert_eq!(output.content().as_str(), block("tool:slow", "1"));
    assert!(logs.contains("instrumented_async{ms=1}: "), "{logs}");
    assert!(logs.contains("slept"), "{logs}");
}
