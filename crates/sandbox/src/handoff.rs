//! How PID 1 hands the first stage the descriptors the network supervisor serves: the
//! seccomp listener and the DNS socket, both of which only PID 1 can create (inside the
//! sandbox's namespaces, under its filter). It writes their numbers on a pipe; the first
//! stage, its parent, copies them with `pidfd_getfd` and acknowledges; only then does
//! PID 1 close its copies and start the tool.

use std::os::fd::{AsFd, OwnedFd};

use rustix::pipe::PipeFlags;
use rustix::process::PidfdGetfdFlags;

/// The first stage's ends.
pub(super) struct Parent {
    numbers: OwnedFd,
    ack: OwnedFd,
}

/// PID 1's ends.
pub(super) struct Child {
    numbers: OwnedFd,
    ack: OwnedFd,
}

pub(super) fn pipes() -> Result<(Parent, Child), String> {
    let pipe = || rustix::pipe::pipe_with(PipeFlags::CLOEXEC).map_err(|e| format!("pipe: {e}"));
    let (numbers_read, numbers_write) = pipe()?;
    let (ack_read, ack_write) = pipe()?;
    Ok((
        Parent {
            numbers: numbers_read,
            ack: ack_write,
        },
        Child {
            numbers: numbers_write,
            ack: ack_read,
        },
    ))
}

impl Child {
    /// Sends the numbers of `fds` and waits until the parent holds its copies.
    pub(super) fn send(self, fds: [&OwnedFd; 2]) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        let mut message = Vec::with_capacity(8);
        for fd in fds {
            message.extend(fd.as_raw_fd().to_le_bytes());
        }
        write_all(&self.numbers, &message)?;
        let mut ack = [0u8; 1];
        loop {
            return match rustix::io::read(&self.ack, &mut ack) {
                Ok(1) => Ok(()),
                Err(rustix::io::Errno::INTR) => continue,
                Ok(_) => Err("the network supervisor did not start".into()),
                Err(e) => Err(format!("waiting for the network supervisor: {e}")),
            };
        }
    }
}

impl Parent {
    /// Copies the descriptors PID 1 (its pidfd `init`) names; `None` if it failed before
    /// it could.
    pub(super) fn receive(&self, init: &OwnedFd) -> Result<Option<[OwnedFd; 2]>, String> {
        let mut message = [0u8; 8];
        let mut got = 0;
        while got < message.len() {
            match rustix::io::read(&self.numbers, &mut message[got..]) {
                Ok(0) => return Ok(None),
                Ok(n) => got += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(format!("reading from the sandbox: {e}")),
            }
        }
        let copy = |at: usize| {
            let mut n = [0u8; 4];
            n.copy_from_slice(&message[at..at + 4]);
            rustix::process::pidfd_getfd(init, i32::from_le_bytes(n), PidfdGetfdFlags::empty())
                .map_err(|e| format!("pidfd_getfd: {e}"))
        };
        Ok(Some([copy(0)?, copy(4)?]))
    }

    /// Lets PID 1 go on.
    pub(super) fn acknowledge(self) -> Result<(), String> {
        write_all(&self.ack, &[1])
    }
}

fn write_all(fd: &impl AsFd, mut bytes: &[u8]) -> Result<(), String> {
    while !bytes.is_empty() {
        match rustix::io::write(fd, bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(format!("writing to the sandbox's other stage: {e}")),
        }
    }
    Ok(())
}
