//! When `--url` opens the GET stream: once `notifications/initialized` is accepted, and before
//! the client's next message goes up, as the SDKs' clients do. A server that sends a request
//! of its own on the GET stream as soon as the client's next request arrives (the conformance
//! suite's `elicitation-sep1034-client-defaults` does, from a tool) loses it when the stream is
//! not open yet.

#[allow(clippy::wildcard_imports)]
use super::*;

/// How long [`slow_to_accept`] holds `notifications/initialized`'s `202`.
const HELD: Duration = Duration::from_millis(300);

/// [`plain`], but `notifications/initialized` is accepted only after [`HELD`], and a GET gets
/// an event stream that stays open while the upstream runs.
fn slow_to_accept() -> impl Fn(&Seen) -> Response<HBody> + Send + Sync {
    let open: Arc<Mutex<Vec<mpsc::Sender<Bytes>>>> = Arc::default();
    move |seen: &Seen| {
        if seen.method == Method::GET {
            let (sender, body) = streamed();
            open.lock().unwrap().push(sender);
            return sse_reply(body);
        }
        if seen.rpc_method() == "notifications/initialized" {
            // The script answers on the connection's own task: holding it holds this answer
            // alone (the runtime has other workers for the other connections).
            thread::sleep(HELD);
        }
        plain(seen)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn url_opens_the_get_stream_before_the_next_request_goes_up() {
    let hostile = Hostile::start(slow_to_accept()).await;
    let mut proxy = stdio_proxy(&hostile.url, &[]);
    proxy.send(&initialize(0));
    assert!(proxy.answer(0).get("result").is_some());
    proxy.send(&initialized());
    proxy.send(&call(1, "fetch"));
    assert_fenced(&proxy.answer(1), "fetch");
    let order: Vec<String> = hostile
        .seen()
        .iter()
        .map(|seen| match seen.method {
            Method::POST => seen.rpc_method(),
            ref other => other.to_string(),
        })
        .collect();
    assert_eq!(
        order,
        [
            "initialize",
            "notifications/initialized",
            "GET",
            "tools/call"
        ],
        "the GET stream must be open before the client's next request reaches the upstream"
    );
}
