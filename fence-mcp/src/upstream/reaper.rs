//! What the upstream leaves outside its process group: with
//! [`Options::with_subreaper`](crate::Options::with_subreaper), on Linux, the proxy's process is
//! a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`) while the proxy runs, so a process the
//! upstream started that left its process group (`setsid`, a daemon's double fork) is
//! re-parented to the proxy when its parent exits, rather than to init. The proxy reaps those
//! that exit while the session runs, and once the upstream has ended, kills and reaps every
//! child its process still has, until none is left.
//!
//! Killing only the process's own children, over and over, rather than every descendant found
//! in `/proc` at once, is what makes it safe: a child's pid cannot be reused before its parent
//! reaps it, so no signal can reach an unrelated process; and each child killed hands its own
//! children to the subreaper, so the next round finds them.

use std::io;
use std::process::{Child, Command};
use std::time::Duration;

/// The subreaper attribute, the thread reaping adopted processes, and what to restore.
#[derive(Debug)]
pub(crate) struct Reaper {
    #[cfg(target_os = "linux")]
    linux: Option<linux::Reaper>,
}

/// What ending the upstream's descendants left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) enum Swept {
    /// No child of the proxy's process is left (or the option is off).
    Clean,
    /// This many children of the proxy's process were still there when patience ran out.
    Left(usize),
}

impl Reaper {
    /// Makes the proxy's process a child subreaper when `enabled` (on Linux), and from then on
    /// reaps every child of it that exits, other than the servers [`Reaper::spawn`] started
    /// (whose `Child` reaps them). Call it before any server is started, so that none of its
    /// descendants can escape before. When it cannot be, the note says why, for stderr, and
    /// the proxy goes on without it.
    pub(crate) fn start(enabled: bool) -> (Reaper, Option<String>) {
        #[cfg(target_os = "linux")]
        {
            if !enabled {
                return (Reaper { linux: None }, None);
            }
            match linux::Reaper::start() {
                Ok((reaper, trouble)) => (
                    Reaper {
                        linux: Some(reaper),
                    },
                    trouble.map(|err| {
                        format!(
                            "cannot watch for SIGCHLD ({err}); what the upstream leaves behind \
                             is reaped only when the proxy ends"
                        )
                    }),
                ),
                Err(err) => (
                    Reaper { linux: None },
                    Some(format!(
                        "cannot become a child subreaper ({err}); a process the upstream starts \
                         outside its process group may outlive the proxy"
                    )),
                ),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = enabled;
            (Reaper {}, None)
        }
    }

    /// Starts a server: the reaper leaves it to its `Child` until [`Reaper::forget`].
    pub(crate) fn spawn(&self, command: &mut Command) -> io::Result<Child> {
        #[cfg(target_os = "linux")]
        if let Some(reaper) = &self.linux {
            return reaper.spawn(command);
        }
        command.spawn()
    }

    /// A server [`Reaper::spawn`] started has been reaped by its `Child`.
    pub(crate) fn forget(&self, pid: u32) {
        #[cfg(target_os = "linux")]
        if let Some(reaper) = &self.linux {
            reaper.forget(pid);
        }
        let _ = pid;
    }

    /// Once the servers have ended: kills (SIGKILL) and reaps every child the proxy's process
    /// has — which, as a subreaper, holds every process the servers left running — until none
    /// is left, or `patience` has passed. Then restores the subreaper attribute.
    pub(crate) fn end_all(self, patience: Duration) -> Swept {
        #[cfg(target_os = "linux")]
        if let Some(reaper) = self.linux {
            return reaper.end_all(patience);
        }
        let _ = patience;
        Swept::Clean
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashSet;
    use std::io;
    use std::process::{Child, Command};
    use std::sync::{Arc, Mutex, PoisonError};
    use std::thread::{self, JoinHandle};
    use std::time::{Duration, Instant};

    use nix::sys::prctl;
    use nix::sys::signal::{Signal, kill};
    use nix::sys::wait::{WaitPidFlag, waitpid};
    use nix::unistd::{Pid, getpid};

    use super::Swept;

    /// The servers' pids, which their `Child`s reap.
    type Servers = Arc<Mutex<HashSet<i32>>>;

    #[derive(Debug)]
    pub(super) struct Reaper {
        /// Whether the process was a subreaper before: then it stays one.
        was_subreaper: bool,
        servers: Servers,
        watcher: Option<(signal_hook::iterator::Handle, JoinHandle<()>)>,
    }

    impl Reaper {
        /// A subreaper, and whether it cannot watch for SIGCHLD (it then reaps at the end only).
        pub(super) fn start() -> nix::Result<(Reaper, Option<io::Error>)> {
            let was_subreaper = prctl::get_child_subreaper()?;
            if !was_subreaper {
                prctl::set_child_subreaper(true)?;
            }
            let mut reaper = Reaper {
                was_subreaper,
                servers: Servers::default(),
                watcher: None,
            };
            let trouble = reaper.watch().err();
            Ok((reaper, trouble))
        }

        fn watch(&mut self) -> io::Result<()> {
            let mut signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGCHLD])?;
            let handle = signals.handle();
            let servers = self.servers.clone();
            let thread = thread::spawn(move || {
                // Anything adopted before the watch began, then at each SIGCHLD.
                reap_exited(&servers);
                for _ in &mut signals {
                    reap_exited(&servers);
                }
            });
            self.watcher = Some((handle, thread));
            Ok(())
        }

        /// Spawns with the servers' set held, so the watcher cannot reap a server that exits
        /// before its pid is in it.
        pub(super) fn spawn(&self, command: &mut Command) -> io::Result<Child> {
            let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
            let child = command.spawn()?;
            servers.insert(i32::try_from(child.id()).unwrap_or(i32::MAX));
            Ok(child)
        }

        pub(super) fn forget(&self, pid: u32) {
            let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
            servers.remove(&i32::try_from(pid).unwrap_or(i32::MAX));
        }

        pub(super) fn end_all(mut self, patience: Duration) -> Swept {
            self.stop_watching();
            let deadline = Instant::now() + patience;
            let swept = loop {
                let children = children();
                if children.is_empty() {
                    break Swept::Clean;
                }
                for &child in &children {
                    let _ = kill(child, Signal::SIGKILL);
                }
                for &child in &children {
                    let _ = waitpid(child, Some(WaitPidFlag::WNOHANG));
                }
                if Instant::now() >= deadline {
                    break Swept::Left(children.len());
                }
                thread::sleep(Duration::from_millis(2));
            };
            // `self` drops here, and restores the attribute.
            swept
        }

        fn stop_watching(&mut self) {
            if let Some((handle, thread)) = self.watcher.take() {
                handle.close();
                let _ = thread.join();
            }
        }
    }

    impl Drop for Reaper {
        fn drop(&mut self) {
            self.stop_watching();
            if !self.was_subreaper {
                let _ = prctl::set_child_subreaper(false);
            }
        }
    }

    /// Reaps every child that has exited, but the servers, whose `Child`s reap them (and read
    /// their status): each child of this process named in `/proc` is waited for without
    /// blocking, the servers' set held so none is started meanwhile.
    fn reap_exited(servers: &Servers) {
        let servers = servers.lock().unwrap_or_else(PoisonError::into_inner);
        for child in children() {
            if !servers.contains(&child.as_raw()) {
                let _ = waitpid(child, Some(WaitPidFlag::WNOHANG));
            }
        }
    }

    /// The processes whose parent is this process, read from `/proc/<pid>/stat` (the
    /// `children` files of `/proc/<pid>/task/` need a kernel option many do not set).
    fn children() -> Vec<Pid> {
        let me = getpid().as_raw();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| {
                let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                (parent_in_stat(&stat)? == me).then(|| Pid::from_raw(pid))
            })
            .collect()
    }

    /// The parent's pid in the text of `/proc/<pid>/stat`: the second field after the command
    /// name, which is in parentheses and may hold anything, `)` included.
    fn parent_in_stat(stat: &str) -> Option<i32> {
        let (_, rest) = stat.rsplit_once(')')?;
        rest.split_whitespace().nth(1)?.parse().ok()
    }

    #[cfg(test)]
    mod tests {
        use std::io::Read as _;
        use std::process::{Command, Stdio};
        use std::time::Duration;

        use nix::sys::prctl;

        use super::super::{Reaper, Swept};

        #[test]
        fn the_parent_follows_a_command_name_holding_parentheses_and_spaces() {
            let stat = "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 90 0 0 0";
            assert_eq!(super::parent_in_stat(stat), Some(17));
            assert_eq!(super::parent_in_stat("garbage"), None);
        }

        // The only test of this crate that starts a process: `end_all` kills every child of
        // the test process.
        #[test]
        fn an_orphan_in_a_session_of_its_own_is_adopted_then_ended_and_the_attribute_restored() {
            assert!(!prctl::get_child_subreaper().unwrap());
            let (reaper, trouble) = Reaper::start(true);
            assert_eq!(trouble, None);
            assert!(prctl::get_child_subreaper().unwrap());

            // It leaves one orphan that lives, and one that exits at once: the watcher reaps
            // that one, and leaves the launcher's status to its `Child`.
            let mut launcher = reaper
                .spawn(
                    Command::new("sh")
                        .args([
                            "-c",
                            "setsid sh -c 'exit 0' </dev/null >/dev/null 2>&1 & \
                             setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!",
                        ])
                        .stdout(Stdio::piped()),
                )
                .unwrap();
            let mut said = String::new();
            launcher
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut said)
                .unwrap();
            assert!(launcher.wait().unwrap().success());
            reaper.forget(launcher.id());
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while super::children().len() > 1 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the exited orphan is reaped"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            let orphan: i32 = said.trim().parse().unwrap();
            let stat = std::fs::read_to_string(format!("/proc/{orphan}/stat")).unwrap();
            assert_eq!(
                super::parent_in_stat(&stat),
                Some(i32::try_from(std::process::id()).unwrap()),
                "adopted: {stat}"
            );

            assert_eq!(reaper.end_all(Duration::from_secs(5)), Swept::Clean);
            assert!(
                !std::path::Path::new(&format!("/proc/{orphan}")).exists(),
                "{orphan} is killed and reaped"
            );
            assert!(!prctl::get_child_subreaper().unwrap(), "restored");
        }

        #[test]
        fn off_it_changes_nothing() {
            let (reaper, trouble) = Reaper::start(false);
            assert_eq!(trouble, None);
            assert_eq!(reaper.end_all(Duration::ZERO), Swept::Clean);
        }
    }
}
