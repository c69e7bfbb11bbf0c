//! The `--listen` front's guards and bounds: whose `Origin` it takes, how long a connection may
//! take to send a request's head, and what it does when the system has no file descriptor left
//! for a connection.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A POST of `initialize` to `addr` as a browser's page would send it, from `origin`.
fn from_origin(addr: &str, origin: &str) -> String {
    let body = initialize(0).to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_takes_only_its_own_origin_scheme_address_and_port() {
    let hostile = Hostile::start(plain).await;
    let front = Listening::start(&["--url", &hostile.url]);
    let port = front.port();
    for origin in [
        // The scheme's own port, 80 or 443, is not the front's.
        "http://localhost".to_owned(),
        "https://localhost".to_owned(),
        format!("https://localhost:{port}"),
        // Another loopback address is another socket, which another server may listen on.
        format!("http://127.0.0.2:{port}"),
        format!("http://[::1]:{port}"),
        format!("http://localhost:{}", port.wrapping_add(1)),
    ] {
        let response = raw(&front.addr, from_origin(&front.addr, &origin).as_bytes()).await;
        assert_eq!(
            response.status,
            403,
            "{origin}: {}",
            String::from_utf8_lossy(&response.body)
        );
    }
    for origin in [
        format!("http://localhost:{port}"),
        format!("http://127.0.0.1:{port}"),
    ] {
        let response = raw(&front.addr, from_origin(&front.addr, &origin).as_bytes()).await;
        assert_eq!(
            response.status,
            200,
            "{origin}: {}",
            String::from_utf8_lossy(&response.body)
        );
    }
    front.says("--allow-origin").await;
}

/// The header read timeout the tests give the proxy, in milliseconds, for not waiting out its
/// default.
const HEADER_TIMEOUT_MS: u64 = 500;

/// Reads `stream` until it closes, within `PATIENCE`.
async fn until_closed(stream: &mut TcpStream) {
    let mut buffer = Vec::new();
    let closed = tokio::time::timeout(PATIENCE, async {
        loop {
            match stream.read_buf(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the connection is still open after {PATIENCE:?}; it sent {:?}",
        String::from_utf8_lossy(&buffer)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_closes_a_connection_whose_request_head_does_not_come_in_time() {
    let hostile = Hostile::start(plain).await;
    let mut command = Listening::command("127.0.0.1:0", &["--url", &hostile.url]);
    command.env(
        "FENCE_MCP_HEADER_READ_TIMEOUT_MS",
        HEADER_TIMEOUT_MS.to_string(),
    );
    let front = Listening::spawn(command);
    let timeout = Duration::from_millis(HEADER_TIMEOUT_MS);

    // Half a head, and nothing more.
    let opened = Instant::now();
    let mut half = TcpStream::connect(&front.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: appl",
        front.addr
    );
    half.write_all(head.as_bytes()).await.unwrap();
    // Nothing at all.
    let silent = TcpStream::connect(&front.addr).await.unwrap();
    let closing = |what: &'static str, mut stream: TcpStream| async move {
        until_closed(&mut stream).await;
        (what, opened.elapsed())
    };
    let closed = tokio::join!(closing("half a head", half), closing("nothing", silent));
    for (what, took) in [closed.0, closed.1] {
        assert!(took >= timeout / 2, "{what}: closed after {took:?}");
    }

    // A whole request is served, and its connection is closed once it idles as long.
    let mut idle = TcpStream::connect(&front.addr).await.unwrap();
    let body = initialize(0).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        front.addr,
        body.len()
    );
    idle.write_all(request.as_bytes()).await.unwrap();
    let response = tokio::time::timeout(PATIENCE, read_raw(&mut idle))
        .await
        .expect("a response");
    assert_eq!(response.status, 200);
    until_closed(&mut idle).await;
}

/// The CPU time process `pid` has used, from `/proc/<pid>/stat` (user and system, in clock
/// ticks, 100 a second on Linux).
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are the stat's fields 14 and 15; `rest` starts at field 3.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// How many file descriptors the proxy may have open in the test below.
const FDS: usize = 64;

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn listen_out_of_file_descriptors_waits_rather_than_spins_and_says_so_once() {
    let hostile = Hostile::start(plain).await;
    let plain_command = Listening::command("127.0.0.1:0", &["--url", &hostile.url]);
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("ulimit -n {FDS} && exec \"$0\" \"$@\""))
        .arg(plain_command.get_program())
        .args(plain_command.get_args());
    let front = Listening::spawn(command);
    let pid = front.child.id();

    // More connections than the proxy has descriptors: the kernel queues them all, and the
    // proxy accepts until it has none left.
    let mut held = Vec::new();
    for _ in 0..FDS + 16 {
        held.push(TcpStream::connect(&front.addr).await.unwrap());
    }
    let open = || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .count()
    };
    let deadline = Instant::now() + PATIENCE;
    while open() < FDS {
        assert!(
            Instant::now() < deadline,
            "the proxy never ran out of descriptors ({} open): {}",
            open(),
            front.stderr()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (before, started) = (cpu_ticks(pid), Instant::now());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_ticks(pid) - before;
    let elapsed = started.elapsed();
    eprintln!("out of descriptors, the proxy used {used} ticks of CPU time in {elapsed:?}");
    // Waiting 100 ms between tries costs next to nothing; trying again at once, a core.
    assert!(
        used <= 30,
        "the proxy used {used} ticks of CPU time in {elapsed:?} with no descriptor left"
    );
    front.says("ulimit -n").await;
    let said = front.stderr().matches("cannot accept a connection").count();
    assert_eq!(said, 1, "{}", front.stderr());

    // Descriptors freed, it serves again.
    drop(held);
    let response = raw(
        &front.addr,
        from_origin(&front.addr, &format!("http://localhost:{}", front.port())).as_bytes(),
    )
    .await;
    assert_eq!(response.status, 200);
}
