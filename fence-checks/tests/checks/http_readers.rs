//! The models of `fence_checks::http_readers` held to the real SDKs: a table of hostile raw HTTP
//! responses, each served byte for byte (in its chunks, 40 ms apart) by a server on a
//! `TcpListener`, read by each official SDK's Streamable HTTP transport
//! (`tests/sdk/http_readers.mjs`, `tests/sdk/http_readers.py`: one process per SDK, every case
//! at once), and what the SDK handed on compared with what the model says, item by item.
//!
//! A message must be the same JSON (members in any order, numbers as doubles, `NaN` and the
//! infinities as `null`, as both SDKs write them); an error's text must be the model's exactly,
//! or, where a library's own message about the input follows (`Said::quotes`), start with the
//! model's text and hold a live marker only where something it may quote does; a reconnection
//! must name the model's last event id.
//!
//! The SDKs are the ones `scripts/sdk-setup.sh` installs (in `$FENCE_SDK_DIR`, by default
//! `target/sdk-clients`); the test runs the script when they are not there.
//! `FENCE_SKIP_SDK_TESTS=1` skips it.
#![cfg(feature = "std")]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use fence_checks::http_readers::{self, Handed, Request, Response, Said, Sdk};
use fence_checks::lenient::{self, Value};

/// How long the server waits between two chunks of a body: long enough that each arrives in
/// a read of its own.
const CHUNK_GAP: Duration = Duration::from_millis(40);

mod cases;

use cases::{Case, cases};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
        .to_path_buf()
}

fn sdk_dir() -> PathBuf {
    std::env::var_os("FENCE_SDK_DIR")
        .map_or_else(|| repo().join("target/sdk-clients"), PathBuf::from)
}

/// Whether the SDKs are there to drive: installed by `scripts/sdk-setup.sh` when they are not.
fn installed() -> bool {
    if std::env::var_os("FENCE_SKIP_SDK_TESTS").is_some_and(|value| value == "1") {
        eprintln!("skipped: FENCE_SKIP_SDK_TESTS=1");
        return false;
    }
    let dir = sdk_dir();
    let present = |dir: &Path| {
        dir.join("venv/bin/python").exists()
            && dir
                .join("node/node_modules/@modelcontextprotocol/sdk")
                .exists()
    };
    if !present(&dir) {
        let output = Command::new("bash")
            .arg(repo().join("scripts/sdk-setup.sh"))
            .output()
            .expect("bash runs scripts/sdk-setup.sh");
        assert!(
            output.status.success(),
            "the MCP SDKs are not installed, and scripts/sdk-setup.sh failed: {}{}\nTo fix: run \
             `bash scripts/sdk-setup.sh` (Python 3.11, Node.js 20), or set FENCE_SKIP_SDK_TESTS=1",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    true
}

/// Serves `responses[n]` at `/case/n`, to every request, on a thread of its own per connection;
/// the listener's address.
fn serve(responses: Vec<Response>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = listener.local_addr().expect("its address");
    let responses = Arc::new(responses);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let responses = Arc::clone(&responses);
            std::thread::spawn(move || {
                let _ = answer(stream, &responses);
            });
        }
    });
    format!("http://{address}")
}

/// Reads one request (its head, and a body of its `Content-Length`) and writes the response of
/// the case its path names, then closes the connection.
fn answer(mut stream: TcpStream, responses: &[Response]) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut head = Vec::new();
    let mut byte = [0_u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 64 * 1024 {
        if stream.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length: usize = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body)?;
    let path = head.split(' ').nth(1).unwrap_or("");
    let Some(response) = path
        .strip_prefix("/case/")
        .and_then(|index| index.parse::<usize>().ok())
        .and_then(|index| responses.get(index))
    else {
        stream.write_all(
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        )?;
        return Ok(());
    };
    let reason = http::StatusCode::from_u16(response.status)
        .ok()
        .and_then(|status| status.canonical_reason())
        .unwrap_or("<none>");
    let mut out = format!("HTTP/1.1 {} {reason}\r\n", response.status).into_bytes();
    for (name, value) in &response.headers {
        out.extend_from_slice(name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"connection: close\r\n\r\n");
    stream.write_all(&out)?;
    stream.flush()?;
    if !matches!(response.status, 204 | 304) {
        for (index, chunk) in response.chunks.iter().enumerate() {
            std::thread::sleep(CHUNK_GAP);
            if index > 0 || !chunk.is_empty() {
                stream.write_all(chunk)?;
                stream.flush()?;
            }
        }
    }
    std::thread::sleep(CHUNK_GAP);
    stream.shutdown(std::net::Shutdown::Both)
}

/// The plan both drivers read: every case's name, URL and request.
fn plan(cases: &[Case], base: &str) -> String {
    let mut items = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let text = |bytes: &[u8]| json_string(&String::from_utf8_lossy(bytes));
        let request = match &case.request {
            Request::Post(body) => format!(r#"{{"kind":"post","body":{}}}"#, text(body)),
            Request::Get => r#"{"kind":"get"}"#.to_owned(),
            Request::Resume {
                last_event_id,
                request,
            } => format!(
                r#"{{"kind":"resume","last_event_id":{},"body":{}}}"#,
                json_string(last_event_id),
                request.as_deref().map_or("null".to_owned(), text)
            ),
        };
        items.push(format!(
            r#"{{"name":{},"url":{},"request":{request}}}"#,
            json_string(case.name),
            json_string(&format!("{base}/case/{index}"))
        ));
    }
    format!(r#"{{"cases":[{}]}}"#, items.join(","))
}

fn json_string(text: &str) -> String {
    http_readers::to_json(&Value::String(text.to_owned()))
}

/// Starts `sdk`'s driver on the plan at `path`.
fn driver(sdk: Sdk, path: &Path) -> std::process::Child {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk");
    let mut command = match sdk {
        Sdk::TypeScript => {
            let mut command = Command::new("node");
            command.arg(here.join("http_readers.mjs"));
            command
        }
        Sdk::Python => {
            let mut command = Command::new(sdk_dir().join("venv/bin/python"));
            command.arg(here.join("http_readers.py"));
            command
        }
    };
    command
        .arg(path)
        .env("FENCE_SDK_DIR", sdk_dir())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("the {sdk:?} driver could not start: {error}"))
}

/// What the driver reported, by case.
fn reports(sdk: Sdk, child: std::process::Child) -> Value {
    let output = child.wait_with_output().expect("the driver runs");
    assert!(
        output.status.success(),
        "the {sdk:?} driver failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let report = lenient::parse(text.trim()).unwrap_or_else(|error| {
        panic!("the {sdk:?} driver's report is not JSON ({error:?}): {text}")
    });
    report
        .get("cases")
        .cloned()
        .expect("the report lists its cases")
}

/// A value as both SDKs' dumps make it comparable: members once (the last), in name order;
/// numbers as doubles, `NaN` and the infinities as `null`.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Number(text) => match text.parse::<f64>() {
            Ok(number) if number.is_finite() => Value::Number(format!("{number:?}")),
            _ => Value::Null,
        },
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        Value::Object(members) => {
            let mut names: Vec<&String> = members.iter().map(|(name, _)| name).collect();
            names.sort();
            names.dedup();
            Value::Object(
                names
                    .into_iter()
                    .map(|name| {
                        let value = value.get(name).map_or(Value::Null, canonical);
                        (name.clone(), value)
                    })
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

fn live(text: &str) -> bool {
    !fence_reference::markers(text.as_bytes()).is_empty()
}

/// Whether the SDK's text `real` is what the model said.
fn said(model: &Said, real: &str) -> bool {
    if model.quotes.is_empty() {
        return real == model.text;
    }
    real.starts_with(&model.text) && (!live(real) || model.texts().any(live))
}

/// How one item the model says differs from the SDK's, if it does.
fn differs(model: &Handed, real: &Value) -> Option<String> {
    let text = |key: &str| real.get(key).and_then(Value::as_str);
    let same = match model {
        Handed::Message(message) => real
            .get("message")
            .is_some_and(|real| canonical(real) == canonical(message)),
        Handed::MadeUp { id, code, message } => real.get("message").is_some_and(|real| {
            let error = real.get("error");
            real.get("id").map(canonical) == Some(canonical(id))
                && error.and_then(|error| error.get("code")).map(canonical)
                    == Some(canonical(&Value::Number(code.to_string())))
                && error
                    .and_then(|error| error.get("message"))
                    .and_then(Value::as_str)
                    .is_some_and(|real| said(message, real))
        }),
        Handed::Raised(message) => text("raised").is_some_and(|real| said(message, real)),
        Handed::Reported(message) => text("reported").is_some_and(|real| said(message, real)),
        Handed::Reconnects(_) => false,
    };
    (!same).then(|| {
        format!(
            "the model says {model:?}, the SDK {}",
            http_readers::to_json(real)
        )
    })
}

/// How what `sdk` handed on in a case differs from what the model says.
fn compare(model: &[Handed], real: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let (reconnects, items): (Vec<&Handed>, Vec<&Handed>) = model
        .iter()
        .partition(|each| matches!(each, Handed::Reconnects(_)));
    let real_items = real.get("items").and_then(Value::items).unwrap_or_default();
    if items.len() == real_items.len() {
        problems.extend(
            items
                .iter()
                .zip(real_items)
                .filter_map(|(model, real)| differs(model, real)),
        );
    } else {
        problems.push(format!(
            "the model hands on {} items, the SDK {}: model {items:?}, SDK {}",
            items.len(),
            real_items.len(),
            http_readers::to_json(real)
        ));
    }
    let model_reconnects = match reconnects.as_slice() {
        [] => None,
        [Handed::Reconnects(id)] => Some(id.clone()),
        _ => {
            problems.push(format!(
                "the model reconnects more than once: {reconnects:?}"
            ));
            None
        }
    };
    let real_reconnects = real
        .get("reconnects")
        .map(|id| id.as_str().map(str::to_owned));
    if model_reconnects != real_reconnects {
        problems.push(format!(
            "the model reconnects with {model_reconnects:?}, the SDK with {real_reconnects:?}"
        ));
    }
    problems
}

/// Every case of the table, read by each real SDK and by its model: the same.
#[test]
fn each_sdk_reads_every_hostile_response_as_its_model_says() {
    if !installed() {
        return;
    }
    let cases = cases();
    assert!(cases.len() >= 40, "the table has {} cases", cases.len());
    let base = serve(cases.iter().map(|case| case.response.clone()).collect());
    let path = std::env::temp_dir().join(format!("fence-http-readers-{}.json", std::process::id()));
    std::fs::write(&path, plan(&cases, &base)).expect("the plan is written");
    let children: Vec<(Sdk, std::process::Child)> = Sdk::ALL
        .into_iter()
        .map(|sdk| (sdk, driver(sdk, &path)))
        .collect();
    let mut failures = Vec::new();
    for (sdk, child) in children {
        let reports = reports(sdk, child);
        for case in &cases {
            let Some(real) = reports.get(case.name) else {
                failures.push(format!("{sdk:?} {}: no report", case.name));
                continue;
            };
            // The Python SDK resumes only its own GET stream, which the driver opens afresh.
            let request = match (&case.request, sdk) {
                (Request::Resume { request: None, .. }, Sdk::Python) => Request::Get,
                (request, _) => request.clone(),
            };
            match http_readers::read(sdk, &request, &case.response) {
                Ok(model) => failures.extend(
                    compare(&model, real)
                        .into_iter()
                        .map(|problem| format!("{sdk:?} {}: {problem}", case.name)),
                ),
                Err(why) => failures.push(format!(
                    "{sdk:?} {}: the model does not read it: {why:?}",
                    case.name
                )),
            }
        }
    }
    let _ = std::fs::remove_file(&path);
    assert!(
        failures.is_empty(),
        "{} differences between the SDKs and their models:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
