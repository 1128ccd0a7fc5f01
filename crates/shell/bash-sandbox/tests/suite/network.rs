//! `network: deny` refuses sockets other than `AF_UNIX` (a seccomp filter installed by the
//! runner, inherited by every descendant); `allow`, dsh's default, connects.

use std::io::ErrorKind;
use std::net::TcpListener;

use dsh_shell::{NetworkPolicy, SandboxMode};

use super::support::{executor, outside_dir, policy, run_in};

fn listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

#[tokio::test]
async fn deny_refuses_tcp_and_allow_connects() {
    let (_workspace, root) = outside_dir();
    let (listener, port) = listener();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");

    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::ReadOnly] {
        let denied = executor(policy(mode, &root, NetworkPolicy::Deny));
        let result = run_in(&denied, &connect, &root, &[]).await;
        assert_ne!(result.exit_code, Some(0), "{result:?}");
        assert_eq!(result.stdout.text, "");
        assert!(
            result.stderr.text.contains("Operation not permitted"),
            "{result:?}"
        );
        // Not a file denial.
        assert!(!result.sandbox.unwrap().denied);
        let error = listener.accept().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::WouldBlock);
    }

    let allowed = executor(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow));
    let result = run_in(&allowed, &connect, &root, &[]).await;
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    assert_eq!(result.stdout.text, "connected\n");
    assert!(listener.accept().is_ok());
}

#[tokio::test]
async fn deny_keeps_unix_sockets_and_binds_descendants() {
    let (_workspace, root) = outside_dir();
    let (listener, port) = listener();
    let fixture = executor(policy(
        SandboxMode::WorkspaceWrite,
        &root,
        NetworkPolicy::Deny,
    ));
    let script = format!(
        "import socket\n\
         a, b = socket.socketpair(socket.AF_UNIX)\n\
         a.sendall(b'unix ok')\n\
         print(b.recv(16).decode())\n\
         s = socket.socket(socket.AF_UNIX)\n\
         s.bind('sock')\n\
         try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n    print('inet connected')\n\
         except OSError as error:\n    print('inet refused', error.errno)\n"
    );
    std::fs::write(root.join("probe.py"), script).unwrap();
    let result = run_in(&fixture, "bash -c 'python3 probe.py'", &root, &[]).await;
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    assert_eq!(result.stdout.text, "unix ok\ninet refused 1\n");
    assert_eq!(listener.accept().unwrap_err().kind(), ErrorKind::WouldBlock);
}
