//! The signals that end the proxy: SIGTERM, SIGINT and SIGHUP, watched on a thread (the stdio
//! shape) or awaited (the shapes on an async runtime).

/// Watches for the signals on a thread of its own, sending `event(signal)` to `events` for
/// each; the handle stops it. `None` when they cannot be watched (stderr says so).
#[cfg(unix)]
pub(crate) fn watch<E: Send + 'static>(
    events: std::sync::mpsc::Sender<E>,
    event: fn(i32) -> E,
) -> Option<signal_hook::iterator::Handle> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = match signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!(
                "fence mcp: cannot watch for signals ({err}); a signal ends the proxy at once"
            );
            return None;
        }
    };
    let handle = signals.handle();
    std::thread::spawn(move || {
        for signal in &mut signals {
            if events.send(event(signal)).is_err() {
                break;
            }
        }
    });
    Some(handle)
}

#[cfg(feature = "http")]
/// The first of SIGTERM, SIGINT and SIGHUP, as the exit status it asks for (128 + its
/// number); never, where there are no such signals.
pub(crate) async fn signalled() -> u8 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let watched = [
            (SignalKind::terminate(), 15),
            (SignalKind::interrupt(), 2),
            (SignalKind::hangup(), 1),
        ];
        let mut streams = Vec::new();
        for (kind, number) in watched {
            if let Ok(stream) = signal(kind) {
                streams.push((stream, number));
            }
        }
        if streams.is_empty() {
            return std::future::pending().await;
        }
        let waits = streams.iter_mut().map(|(stream, number)| {
            let number = *number;
            Box::pin(async move {
                stream.recv().await;
                number
            })
        });
        128 + futures_util::future::select_all(waits).await.0
    }
    #[cfg(not(unix))]
    std::future::pending().await
}
