//! The first seccomp filter, written as classic BPF by hand because it needs what
//! seccompiler cannot express: answers other than EPERM, per-argument defaults, and user
//! notification. Installed before seccompiler's deny list ([`super::confine`]), which
//! forbids installing filters after it.
//!
//! It refuses the x32 system call ABI (a second, unfiltered numbering on x86_64), answers
//! `clone3` with ENOSYS (its flags live in memory, out of a filter's reach, and libc falls
//! back to `clone`, whose flags the deny list checks), and allows only the socket
//! families a tool has a use for. For a networked tool it also hands every `connect` to
//! the supervisor ([`super::supervise`]) and refuses TCP Fast Open, the one other way to
//! connect a TCP socket.

use libc::sock_filter;

const LD_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const JSET: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

/// Offsets into `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low half of argument `i` (both supported architectures are little-endian).
const fn arg(i: u32) -> u32 {
    16 + 8 * i
}

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
const fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

const X32_BIT: u32 = 0x4000_0000;
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;
const MSG_FASTOPEN: u32 = 0x2000_0000;

/// Socket families a tool may create: local, IPv4, IPv6, and netlink (interface lists
/// and address selection use it). Everything else (vsock to the hypervisor, packet,
/// Bluetooth, the kernel's crypto API…) only widens the kernel a tool can reach.
const FAMILIES: &[i32] = &[
    libc::AF_UNIX,
    libc::AF_INET,
    libc::AF_INET6,
    libc::AF_NETLINK,
];

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// `if nr == call { return action }`, leaving the number in the accumulator.
fn on(program: &mut Vec<sock_filter>, call: i64, action: u32) {
    program.push(jump(JEQ, call as u32, 0, 1));
    program.push(stmt(RET, action));
}

/// `if nr == call && arg(i) & bits { return action }`, reloading the number after.
fn on_flags(program: &mut Vec<sock_filter>, call: i64, i: u32, bits: u32, action: u32) {
    program.push(jump(JEQ, call as u32, 0, 4));
    program.push(stmt(LD_ABS, arg(i)));
    program.push(jump(JSET, bits, 0, 1));
    program.push(stmt(RET, action));
    program.push(stmt(LD_ABS, NR));
}

/// The program for this architecture; `supervised` adds the network supervisor's traps.
pub(super) fn program(supervised: bool) -> Result<Vec<sock_filter>, String> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => AUDIT_ARCH_X86_64,
        "aarch64" => AUDIT_ARCH_AARCH64,
        other => return Err(format!("no seccomp filter for {other}")),
    };
    let mut p = vec![
        stmt(LD_ABS, ARCH),
        jump(JEQ, arch, 1, 0),
        stmt(RET, libc::SECCOMP_RET_KILL_PROCESS),
        stmt(LD_ABS, NR),
    ];
    if arch == AUDIT_ARCH_X86_64 {
        p.push(jump(JGE, X32_BIT, 0, 1));
        p.push(stmt(RET, errno(libc::ENOSYS)));
    }
    on(&mut p, libc::SYS_clone3, errno(libc::ENOSYS));
    if supervised {
        on(&mut p, libc::SYS_connect, NOTIFY);
        let refuse = errno(libc::EOPNOTSUPP);
        on_flags(&mut p, libc::SYS_sendto, 3, MSG_FASTOPEN, refuse);
        on_flags(&mut p, libc::SYS_sendmsg, 2, MSG_FASTOPEN, refuse);
        on_flags(&mut p, libc::SYS_sendmmsg, 3, MSG_FASTOPEN, refuse);
    }
    // Last, since it leaves the family in the accumulator: socket(family, …).
    let n = FAMILIES.len() as u8;
    p.push(jump(JEQ, libc::SYS_socket as u32, 0, n + 2));
    p.push(stmt(LD_ABS, arg(0)));
    for (i, &family) in FAMILIES.iter().enumerate() {
        p.push(jump(JEQ, family as u32, n - i as u8, 0));
    }
    p.push(stmt(RET, errno(libc::EAFNOSUPPORT)));
    p.push(stmt(RET, ALLOW));
    Ok(p)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Runs the program on one system call, as the kernel would.
    fn run(program: &[sock_filter], nr: i64, args: [u64; 6]) -> u32 {
        let arch = match std::env::consts::ARCH {
            "x86_64" => AUDIT_ARCH_X86_64,
            _ => AUDIT_ARCH_AARCH64,
        };
        let word = |k: u32| -> u32 {
            match k {
                NR => nr as u32,
                ARCH => arch,
                k => {
                    let a = args[((k - 16) / 8) as usize];
                    if (k - 16) % 8 == 0 {
                        a as u32
                    } else {
                        (a >> 32) as u32
                    }
                }
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let ins = program[pc];
            pc += 1;
            match ins.code {
                LD_ABS => acc = word(ins.k),
                RET => return ins.k,
                JEQ | JGE | JSET => {
                    let taken = match ins.code {
                        JEQ => acc == ins.k,
                        JGE => acc >= ins.k,
                        _ => acc & ins.k != 0,
                    };
                    pc += usize::from(if taken { ins.jt } else { ins.jf });
                }
                other => panic!("unexpected instruction {other:#x}"),
            }
        }
    }

    #[test]
    fn every_jump_lands_inside_the_program() {
        for supervised in [false, true] {
            let p = program(supervised).unwrap();
            for (i, ins) in p.iter().enumerate() {
                if ins.code != RET && ins.code != LD_ABS {
                    assert!(i + 1 + usize::from(ins.jt.max(ins.jf)) < p.len());
                }
            }
            assert_eq!(p.last().unwrap().code, RET);
        }
    }

    #[test]
    fn answers_as_documented() {
        let plain = program(false).unwrap();
        let supervised = program(true).unwrap();
        let none = [0; 6];
        assert_eq!(run(&plain, libc::SYS_read, none), ALLOW);
        assert_eq!(run(&plain, libc::SYS_clone3, none), errno(libc::ENOSYS));
        assert_eq!(run(&plain, libc::SYS_connect, none), ALLOW);
        assert_eq!(run(&supervised, libc::SYS_connect, none), NOTIFY);
        for family in FAMILIES {
            let args = [*family as u64, 1, 0, 0, 0, 0];
            assert_eq!(run(&supervised, libc::SYS_socket, args), ALLOW);
        }
        for family in [libc::AF_VSOCK, libc::AF_PACKET, libc::AF_ALG] {
            let args = [family as u64, 1, 0, 0, 0, 0];
            assert_eq!(
                run(&plain, libc::SYS_socket, args),
                errno(libc::EAFNOSUPPORT)
            );
        }
        let fast_open = [3, 0, 10, u64::from(MSG_FASTOPEN), 0, 0];
        assert_eq!(
            run(&supervised, libc::SYS_sendto, fast_open),
            errno(libc::EOPNOTSUPP)
        );
        assert_eq!(run(&plain, libc::SYS_sendto, fast_open), ALLOW);
        let ordinary = [3, 0, 10, libc::MSG_NOSIGNAL as u64, 0, 0];
        assert_eq!(run(&supervised, libc::SYS_sendto, ordinary), ALLOW);
        let fast_msg = [3, 0, u64::from(MSG_FASTOPEN), 0, 0, 0];
        assert_eq!(
            run(&supervised, libc::SYS_sendmsg, fast_msg),
            errno(libc::EOPNOTSUPP)
        );
        assert_eq!(
            run(&supervised, libc::SYS_sendmmsg, fast_open),
            errno(libc::EOPNOTSUPP)
        );
        if std::env::consts::ARCH == "x86_64" {
            assert_eq!(run(&plain, 0x4000_0000 + 42, none), errno(libc::ENOSYS));
        }
    }
}
