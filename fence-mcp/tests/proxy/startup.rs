//! What the proxy says when it cannot start what it was told to: a server's command that cannot
//! run, over stdio (the client's `initialize` is answered with why) and behind `--listen`
//! (checked before listening); a pin file whose folder is missing (made under the home folder,
//! else an error saying how).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{Lines, PATIENCE, binaries, proxy_command};

/// `fence mcp ARGS -- COMMAND`, its pipes the test's.
fn proxy(args: &[&str], command: &Path) -> Lines {
    let mut proxy = Command::new(&binaries().fence);
    proxy.arg("mcp").args(args).arg("--").arg(command);
    Lines::spawn(proxy)
}

/// The `initialize` request a client sends first.
fn initialize(id: u64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "fence-mcp-tests", "version": "1" },
        },
    })
}

/// A file in `dir` named `name`, holding `text`, with the permissions `mode`.
fn file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

/// The client's `initialize` (after a notification and a line that is no message) gets an
/// error naming the command and the system's error, not a closed connection; the proxy then
/// exits as a shell would (127: not found, 126: not executable).
#[test]
fn a_server_that_cannot_start_answers_the_clients_initialize_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let not_executable = file(dir.path(), "server.py", "print('hi')\n", 0o644);
    let no_interpreter = file(
        dir.path(),
        "server.sh",
        "#!/nonexistent/interpreter\n",
        0o755,
    );
    for (command, status, said) in [
        (
            Path::new("/nonexistent/mcp-server"),
            127,
            "/nonexistent/mcp-server does not exist",
        ),
        (
            Path::new("no-such-mcp-server-on-path"),
            127,
            "no folder of PATH holds it",
        ),
        (not_executable.as_path(), 126, "is not executable"),
        (
            no_interpreter.as_path(),
            127,
            "a script's interpreter (its `#!` line)",
        ),
    ] {
        let mut client = proxy(&[], command);
        client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled" }));
        client.send_line(b"not json");
        client.send(&initialize(7));
        let refused = client.next();
        assert_eq!(refused["id"], Value::Null, "{refused}");
        let answer = client.next();
        assert_eq!(answer["id"], 7, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        let shown = command.display().to_string();
        for part in [shown.as_str(), said, "(for initialize)"] {
            assert!(message.contains(part), "{part:?} in {answer}");
        }
        let os_error = if status == 126 {
            "Permission denied"
        } else {
            "No such file or directory"
        };
        assert!(message.contains(os_error), "{answer}");
        assert_eq!(client.wait(PATIENCE).code(), Some(status), "{message}");
        // Read on a thread of its own: the process's end may come first.
        client.stderr_until(said);
    }
}

/// A client that closes its input without a request does not keep the proxy waiting.
#[test]
fn a_server_that_cannot_start_and_a_client_gone_end_the_proxy_at_once() {
    let mut client = proxy(&[], Path::new("/nonexistent/mcp-server"));
    client.close();
    assert_eq!(client.wait(PATIENCE).code(), Some(127));
}

/// Behind `--listen`, a command that cannot start stops the proxy before it listens, with
/// status 2 and why; one whose file is there starts it listening (what cannot be told
/// before it runs, a script's missing interpreter, is the first session's error).
#[test]
fn listen_checks_the_servers_command_before_listening() {
    let dir = tempfile::tempdir().unwrap();
    let not_executable = file(dir.path(), "server.py", "print('hi')\n", 0o644);
    let no_interpreter = file(
        dir.path(),
        "server.sh",
        "#!/nonexistent/interpreter\n",
        0o755,
    );
    for (command, said) in [
        (
            Path::new("/nonexistent/mcp-server"),
            "No such file or directory (os error 2); /nonexistent/mcp-server does not exist",
        ),
        (
            Path::new("no-such-mcp-server-on-path"),
            "no folder of PATH holds it",
        ),
        (
            not_executable.as_path(),
            "Permission denied (os error 13); ",
        ),
        (dir.path(), "is a folder, not a program"),
    ] {
        let mut proxy = proxy(&["--listen", "127.0.0.1:0"], command);
        assert_eq!(proxy.wait(PATIENCE).code(), Some(2), "{}", proxy.stderr());
        let stderr = proxy.stderr_until(said);
        assert!(
            stderr.contains(&format!(
                "cannot start the server {:?}",
                command.as_os_str()
            )),
            "{stderr}"
        );
        assert!(stderr.contains(said), "{said:?} in {stderr}");
        assert!(!stderr.contains("listening"), "{stderr}");
    }
    let proxy = proxy(&["--listen", "127.0.0.1:0"], &no_interpreter);
    proxy.stderr_until("listening on http://");
}

/// `fence mcp --pin PIN -- <the test server>`, with `HOME` set to `home`, from the folder `at`.
fn pinning(pin: &Path, home: &Path, at: &Path) -> Lines {
    let mut command = proxy_command(&["--pin", pin.to_str().unwrap()]);
    command.env("HOME", home).current_dir(at);
    Lines::spawn(command)
}

/// `--pin ~/.config/fence/…` on a machine where no such folder exists: the proxy makes it (and
/// `.config`), mode 0700, and pins into it.
#[test]
fn a_pin_files_missing_folder_under_home_is_made() {
    let home = tempfile::tempdir().unwrap();
    let pin = home.path().join(".config/fence/server.pin.json");
    let mut client = pinning(&pin, home.path(), home.path());
    client.send(&initialize(0));
    assert!(client.answer(0).get("result").is_some());
    client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    client.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
    assert!(client.answer(1).get("result").is_some());
    client.close();
    assert_eq!(client.wait(PATIENCE).code(), Some(0), "{}", client.stderr());
    let pinned: Value = serde_json::from_slice(&std::fs::read(&pin).unwrap()).unwrap();
    assert!(
        pinned["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
    );
    for folder in [".config", ".config/fence"] {
        let mode = std::fs::metadata(home.path().join(folder))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{folder}");
    }
    let made = format!(
        "made its folder {}, mode 0700",
        pin.parent().unwrap().display()
    );
    client.stderr_until(&made);
}

/// A pin file whose folder is missing outside the home folder, or named from `~` (which only a
/// shell expands), stops the proxy with status 2 and what to do; nothing is made.
#[test]
fn a_pin_files_missing_folder_elsewhere_is_an_error_saying_how() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let elsewhere = dir.path().join("elsewhere/my pins");
    let outside = elsewhere.join("server.pin.json");
    let climbing = home.join("../elsewhere/server.pin.json");
    let tilde = Path::new("~/.config/fence/server.pin.json");
    for (pin, said) in [
        (
            outside.as_path(),
            format!(
                "the proxy makes one only under your home folder: create it (`mkdir -p '{}'`)",
                elsewhere.display()
            ),
        ),
        (climbing.as_path(), "`mkdir -p ".to_owned()),
        (
            tilde,
            format!(
                "the path starts with `~`, which only a shell makes your home folder; give the \
                 whole path ({}/…)",
                home.display()
            ),
        ),
    ] {
        let mut client = pinning(pin, &home, &home);
        assert_eq!(client.wait(PATIENCE).code(), Some(2), "{}", client.stderr());
        let stderr = client.stderr_until(&said);
        assert!(stderr.contains("there is no such file, and "), "{stderr}");
        assert!(stderr.contains(&said), "{said:?} in {stderr}");
    }
    assert!(!dir.path().join("elsewhere").exists());
    assert!(!home.join("~").exists());
}

/// An address in use is the operator's to change, not a server's failure: exit status 2 (1 is
/// for requests a server left unanswered), and what to do.
#[test]
fn an_address_in_use_exits_2_saying_what_to_do() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let mut proxy = Lines::spawn(proxy_command(&["--listen", &addr]));
    assert_eq!(proxy.wait(PATIENCE).code(), Some(2), "{}", proxy.stderr());
    let stderr = proxy.stderr_until("give another port, or port 0 for a free one");
    assert!(
        stderr.contains(&format!("cannot listen on {addr}: "))
            && stderr.contains("give another port, or port 0 for a free one"),
        "{stderr}"
    );
}
