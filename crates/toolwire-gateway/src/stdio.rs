//! The host's stdin and stdout read and written on the gateway's own thread when they are
//! pipes or sockets (as every host spawns its MCP servers): tokio's `stdin()`/`stdout()`
//! hand each read and write to a blocking-pool thread, two thread hops more per call
//! (measured in the gateway_echo bench row, where they cost most on a loaded machine).
//! Anything else (a terminal, a file) keeps tokio's own handles, whose file description
//! must not be made non-blocking under the shell that shares it.

use std::os::fd::AsFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The host's stdin for rmcp: polled on the reactor (its flags put back when dropped),
/// or tokio's handle.
#[derive(Debug)]
// The `Restore`s are held for their drop.
#[allow(dead_code)]
pub(crate) enum Input {
    Socket(tokio::net::UnixStream, Restore),
    Pipe(tokio::net::unix::pipe::Receiver, Restore),
    Tokio(tokio::io::Stdin),
}

/// The host's stdout for rmcp: polled on the reactor (its flags put back when dropped),
/// or tokio's handle.
#[derive(Debug)]
#[allow(dead_code)]
pub(crate) enum Output {
    Socket(tokio::net::UnixStream, Restore),
    Pipe(tokio::net::unix::pipe::Sender, Restore),
    Tokio(tokio::io::Stdout),
}

/// The host's stdin and stdout for rmcp.
pub(crate) fn stdio() -> (Input, Output) {
    let [stdin, stdout, stderr] = [
        std::io::stdin().as_fd().try_clone_to_owned().ok(),
        std::io::stdout().as_fd().try_clone_to_owned().ok(),
        std::io::stderr().as_fd().try_clone_to_owned().ok(),
    ];
    let (id_in, id_out, id_err) = (identity(&stdin), identity(&stdout), identity(&stderr));
    // A stream shared with another (one socket as stdin and stdout, or stderr sent where
    // stdout goes) keeps tokio's handle: the others' writes (an `eprintln!`) expect a
    // blocking descriptor, and one end's drop would restore the flags under the other.
    let alone = |id: Option<(u64, u64, u32)>, others: [Option<(u64, u64, u32)>; 2]| {
        id.is_some() && others.iter().all(|other| *other != id)
    };
    let input = stdin
        .filter(|_| alone(id_in, [id_out, id_err]))
        .and_then(|fd| match polled(fd)? {
            (Kind::Socket(s), restore) => Some(Input::Socket(s, restore)),
            (Kind::Pipe(fd), restore) => {
                let pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()?;
                Some(Input::Pipe(pipe, restore))
            }
        })
        .unwrap_or_else(|| Input::Tokio(tokio::io::stdin()));
    let output = stdout
        .filter(|_| alone(id_out, [id_in, id_err]))
        .and_then(|fd| match polled(fd)? {
            (Kind::Socket(s), restore) => Some(Output::Socket(s, restore)),
            (Kind::Pipe(fd), restore) => {
                let pipe = tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()?;
                Some(Output::Pipe(pipe, restore))
            }
        })
        .unwrap_or_else(|| Output::Tokio(tokio::io::stdout()));
    (input, output)
}

/// The device, inode and type a descriptor refers to: equal for two ends of one pipe or
/// socket.
fn identity(fd: &Option<std::os::fd::OwnedFd>) -> Option<(u64, u64, u32)> {
    let stat = nix::sys::stat::fstat(fd.as_ref()?).ok()?;
    #[allow(clippy::useless_conversion)] // Their widths differ between targets.
    Some((
        u64::from(stat.st_dev),
        u64::from(stat.st_ino),
        u32::from(stat.st_mode),
    ))
}

/// What a standard stream is, when it can be polled.
enum Kind {
    Socket(tokio::net::UnixStream),
    /// Made into tokio's pipe end by the caller (which of the two it is).
    Pipe(std::os::fd::OwnedFd),
}

/// `fd` ready to be polled, when it is a socket or a pipe; else `None` (the caller keeps
/// tokio's handle). Its file status flags are kept to be put back.
fn polled(fd: std::os::fd::OwnedFd) -> Option<(Kind, Restore)> {
    use nix::fcntl::{F_GETFL, OFlag, fcntl};
    use nix::sys::stat::{SFlag, fstat};
    let kind = SFlag::from_bits_truncate(fstat(&fd).ok()?.st_mode) & SFlag::S_IFMT;
    let flags = OFlag::from_bits_truncate(fcntl(&fd, F_GETFL).ok()?);
    let restore = Restore {
        fd: fd.try_clone().ok()?,
        flags,
    };
    if kind == SFlag::S_IFSOCK {
        let socket = std::os::unix::net::UnixStream::from(fd);
        socket.set_nonblocking(true).ok()?;
        let socket = tokio::net::UnixStream::from_std(socket).ok()?;
        Some((Kind::Socket(socket), restore))
    } else if kind == SFlag::S_IFIFO {
        // tokio's pipe ends make it non-blocking themselves.
        Some((Kind::Pipe(fd), restore))
    } else {
        None
    }
}

/// A stream's file status flags as they were (blocking), put back when the gateway is
/// done with it: the description may outlive this process (a shell's pipe).
#[derive(Debug)]
pub(crate) struct Restore {
    fd: std::os::fd::OwnedFd,
    flags: nix::fcntl::OFlag,
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = nix::fcntl::fcntl(&self.fd, nix::fcntl::F_SETFL(self.flags));
    }
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Input::Socket(s, _) => Pin::new(s).poll_read(cx, buf),
            Input::Pipe(p, _) => Pin::new(p).poll_read(cx, buf),
            Input::Tokio(t) => Pin::new(t).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Output::Socket(s, _) => Pin::new(s).poll_write(cx, buf),
            Output::Pipe(p, _) => Pin::new(p).poll_write(cx, buf),
            Output::Tokio(t) => Pin::new(t).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Output::Socket(s, _) => Pin::new(s).poll_flush(cx),
            Output::Pipe(p, _) => Pin::new(p).poll_flush(cx),
            Output::Tokio(t) => Pin::new(t).poll_flush(cx),
        }
    }

    /// A flush only, as tokio's stdout does: shutting the socket's write side would
    /// also end it for anything else holding it.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}
