//! Binds the host's WASI preview1 into a wasmtime `Linker`.
//!
//! Blocking calls (`poll_oneoff`, `sched_yield`) are async host functions:
//! they return Pending to suspend the node's fiber until the scheduler wakes
//! it. Everything else is a plain sync call. Imports the host does not
//! implement get a stub (see [`stub_unknown_imports`]).
use super::errno;
use super::proc::ProcExit;
use super::{args, clock, fd, host, path, poll, proc, sock, Cx};
use crate::node::NodeCtx;
use std::collections::BTreeSet;
use wasmtime::{Caller, ExternType, Linker, Module, Val, ValType};

pub const WASI: &str = "wasi_snapshot_preview1";

/// Preview1 calls this host deliberately does not implement yet: they return
/// ENOSYS/ENOTSUP and are logged once per run.
const UNSUPPORTED: &[(&str, u32)] = &[
    ("path_link", 7),
    ("path_symlink", 5),
    ("proc_raise", 1),
];

macro_rules! wasi_fn {
    ($linker:ident, $names:ident, $name:literal, |$cx:ident $(, $arg:ident : $ty:ty)*| $body:expr) => {
        $names.insert($name);
        $linker.func_wrap(WASI, $name, |mut caller: Caller<'_, NodeCtx> $(, $arg: $ty)*| -> wasmtime::Result<i32> {
            let errno = host(&mut caller, |$cx: &mut Cx<'_>| $body);
            crashed(&caller)?;
            Ok(i32::from(errno))
        })?;
    };
}

use crate::traps::crashed;

/// Builds the linker every node of a run uses, and the names it defines.
pub fn linker(engine: &wasmtime::Engine) -> wasmtime::Result<(Linker<NodeCtx>, BTreeSet<&'static str>)> {
    let mut l: Linker<NodeCtx> = Linker::new(engine);
    let mut names: BTreeSet<&'static str> = BTreeSet::new();
    let n = &mut names;

    wasi_fn!(l, n, "args_get", |cx, a: i32, b: i32| args::args_get(cx, a as u32, b as u32));
    wasi_fn!(l, n, "args_sizes_get", |cx, a: i32, b: i32| args::args_sizes_get(cx, a as u32, b as u32));
    wasi_fn!(l, n, "environ_get", |cx, a: i32, b: i32| args::environ_get(cx, a as u32, b as u32));
    wasi_fn!(l, n, "environ_sizes_get", |cx, a: i32, b: i32| args::environ_sizes_get(cx, a as u32, b as u32));
    wasi_fn!(l, n, "clock_time_get", |cx, id: i32, p: i64, out: i32| clock::clock_time_get(cx, id as u32, p as u64, out as u32));
    wasi_fn!(l, n, "clock_res_get", |cx, id: i32, out: i32| clock::clock_res_get(cx, id as u32, out as u32));
    wasi_fn!(l, n, "random_get", |cx, buf: i32, len: i32| proc::random_get(cx, buf as u32, len as u32));

    wasi_fn!(l, n, "fd_pread", |cx, f: i32, i: i32, c: i32, off: i64, o: i32| fd::fd_pread(cx, f as u32, i as u32, c as u32, off as u64, o as u32));
    wasi_fn!(l, n, "fd_seek", |cx, f: i32, d: i64, w: i32, o: i32| fd::fd_seek(cx, f as u32, d, w as u8, o as u32));
    wasi_fn!(l, n, "fd_tell", |cx, f: i32, o: i32| fd::fd_tell(cx, f as u32, o as u32));
    wasi_fn!(l, n, "fd_close", |cx, f: i32| fd::fd_close(cx, f as u32));
    wasi_fn!(l, n, "fd_renumber", |cx, a: i32, b: i32| fd::fd_renumber(cx, a as u32, b as u32));
    wasi_fn!(l, n, "fd_fdstat_get", |cx, f: i32, o: i32| fd::fd_fdstat_get(cx, f as u32, o as u32));
    wasi_fn!(l, n, "fd_fdstat_set_flags", |cx, f: i32, fl: i32| fd::fd_fdstat_set_flags(cx, f as u32, fl as u16));
    wasi_fn!(l, n, "fd_fdstat_set_rights", |cx, f: i32, _b: i64, _i: i64| fd::fd_fdstat_set_rights(cx, f as u32));
    wasi_fn!(l, n, "fd_filestat_get", |cx, f: i32, o: i32| fd::fd_filestat_get(cx, f as u32, o as u32));
    wasi_fn!(l, n, "fd_filestat_set_size", |cx, f: i32, s: i64| fd::fd_filestat_set_size(cx, f as u32, s as u64));
    wasi_fn!(l, n, "fd_filestat_set_times", |cx, f: i32, _a: i64, _m: i64, _fl: i32| fd::fd_filestat_set_times(cx, f as u32));
    wasi_fn!(l, n, "fd_advise", |cx, f: i32, _o: i64, _l: i64, _a: i32| fd::fd_advise(cx, f as u32));
    wasi_fn!(l, n, "fd_allocate", |cx, f: i32, o: i64, len: i64| fd::fd_allocate(cx, f as u32, o as u64, len as u64));
    wasi_fn!(l, n, "fd_prestat_get", |cx, f: i32, o: i32| fd::fd_prestat_get(cx, f as u32, o as u32));
    wasi_fn!(l, n, "fd_prestat_dir_name", |cx, f: i32, p: i32, len: i32| fd::fd_prestat_dir_name(cx, f as u32, p as u32, len as u32));
    wasi_fn!(l, n, "fd_readdir", |cx, f: i32, b: i32, len: i32, c: i64, u: i32| fd::fd_readdir(cx, f as u32, b as u32, len as u32, c as u64, u as u32));

    wasi_fn!(l, n, "path_open", |cx, dirfd: i32, _lf: i32, p: i32, len: i32, of: i32, rb: i64, _ri: i64, ff: i32, out: i32| {
        path::path_open(cx, dirfd as u32, p as u32, len as u32, of as u16, rb as u64, ff as u16, out as u32)
    });
    wasi_fn!(l, n, "path_create_directory", |cx, f: i32, p: i32, len: i32| path::path_create_directory(cx, f as u32, p as u32, len as u32));
    wasi_fn!(l, n, "path_filestat_get", |cx, f: i32, _fl: i32, p: i32, len: i32, o: i32| path::path_filestat_get(cx, f as u32, p as u32, len as u32, o as u32));
    wasi_fn!(l, n, "path_filestat_set_times", |cx, f: i32, _fl: i32, p: i32, len: i32, _a: i64, _m: i64, _ff: i32| {
        path::path_filestat_set_times(cx, f as u32, p as u32, len as u32)
    });
    wasi_fn!(l, n, "path_unlink_file", |cx, f: i32, p: i32, len: i32| path::path_unlink_file(cx, f as u32, p as u32, len as u32));
    wasi_fn!(l, n, "path_remove_directory", |cx, f: i32, p: i32, len: i32| path::path_remove_directory(cx, f as u32, p as u32, len as u32));
    wasi_fn!(l, n, "path_rename", |cx, f: i32, p: i32, len: i32, tf: i32, tp: i32, tlen: i32| {
        path::path_rename(cx, f as u32, p as u32, len as u32, tf as u32, tp as u32, tlen as u32)
    });
    wasi_fn!(l, n, "path_readlink", |cx, f: i32, p: i32, len: i32, _b: i32, _bl: i32, _u: i32| path::path_readlink(cx, f as u32, p as u32, len as u32));

    n.insert("fd_read");
    l.func_wrap_async(WASI, "fd_read", |mut caller: Caller<'_, NodeCtx>, (f, i, c, o): (i32, i32, i32, i32)| {
        Box::new(async move { fd::fd_read_async(&mut caller, f as u32, i as u32, c as u32, o as u32).await })
    })?;
    n.insert("fd_pwrite");
    l.func_wrap_async(WASI, "fd_pwrite", |mut caller: Caller<'_, NodeCtx>, (f, i, c, off, o): (i32, i32, i32, i64, i32)| {
        Box::new(async move { fd::fd_pwrite_async(&mut caller, f as u32, i as u32, c as u32, off as u64, o as u32).await })
    })?;
    n.insert("fd_write");
    l.func_wrap_async(WASI, "fd_write", |mut caller: Caller<'_, NodeCtx>, (f, i, c, o): (i32, i32, i32, i32)| {
        Box::new(async move { fd::fd_write_async(&mut caller, f as u32, i as u32, c as u32, o as u32).await })
    })?;

    // Sockets: preview1's and the WasmEdge extension's.
    wasi_fn!(l, n, "sock_open", |cx, af: i32, ty: i32, o: i32| sock::sock_open(cx, af, ty, o as u32));
    wasi_fn!(l, n, "sock_bind", |cx, f: i32, a: i32, p: i32| sock::sock_bind(cx, f as u32, a as u32, p as u32));
    wasi_fn!(l, n, "sock_listen", |cx, f: i32, b: i32| sock::sock_listen(cx, f as u32, b));
    wasi_fn!(l, n, "sock_shutdown", |cx, f: i32, how: i32| sock::sock_shutdown(cx, f as u32, how));
    wasi_fn!(l, n, "sock_getsockopt", |cx, f: i32, lv: i32, nm: i32, v: i32, _len: i32| sock::sock_getsockopt(cx, f as u32, lv as u32, nm as u32, v as u32));
    wasi_fn!(l, n, "sock_setsockopt", |cx, f: i32, lv: i32, nm: i32, v: i32, len: i32| sock::sock_setsockopt(cx, f as u32, lv as u32, nm as u32, v as u32, len as u32));
    wasi_fn!(l, n, "sock_getaddrinfo", |cx, nd: i32, nl: i32, sv: i32, sl: i32, h: i32, r: i32, m: i32, rl: i32| {
        sock::sock_getaddrinfo(cx, nd as u32, nl as u32, sv as u32, sl as u32, h as u32, r as u32, m as u32, rl as u32)
    });
    n.insert("sock_connect");
    l.func_wrap_async(WASI, "sock_connect", |mut caller: Caller<'_, NodeCtx>, (f, a, p): (i32, i32, i32)| {
        Box::new(async move { sock::sock_connect(&mut caller, f as u32, a as u32, p as u32).await })
    })?;
    n.insert("sock_recv");
    l.func_wrap_async(WASI, "sock_recv", |mut caller: Caller<'_, NodeCtx>, (f, i, c, fl, o, of): (i32, i32, i32, i32, i32, i32)| {
        Box::new(async move { sock::sock_recv(&mut caller, f as u32, i as u32, c as u32, fl as u16, o as u32, of as u32).await })
    })?;
    n.insert("sock_send");
    l.func_wrap_async(WASI, "sock_send", |mut caller: Caller<'_, NodeCtx>, (f, i, c, _fl, o): (i32, i32, i32, i32, i32)| {
        Box::new(async move { sock::sock_send(&mut caller, f as u32, i as u32, c as u32, o as u32).await })
    })?;

    names.insert("proc_exit");
    l.func_wrap(WASI, "proc_exit", |mut caller: Caller<'_, NodeCtx>, code: i32| -> wasmtime::Result<()> {
        host(&mut caller, |_| ());
        Err(wasmtime::Error::new(ProcExit(code)))
    })?;
    names.insert("poll_oneoff");
    l.func_wrap_async(WASI, "poll_oneoff", |mut caller: Caller<'_, NodeCtx>, (i, o, c, ne): (i32, i32, i32, i32)| {
        Box::new(async move { poll::poll_oneoff(&mut caller, i as u32, o as u32, c as u32, ne as u32).await })
    })?;
    for name in ["fd_sync", "fd_datasync"] {
        names.insert(name);
        l.func_wrap_async(WASI, name, |mut caller: Caller<'_, NodeCtx>, (f,): (i32,)| {
            Box::new(async move { fd::fd_sync(&mut caller, f as u32).await })
        })?;
    }
    names.insert("sched_yield");
    l.func_wrap_async(WASI, "sched_yield", |mut caller: Caller<'_, NodeCtx>, (): ()| {
        Box::new(async move { proc::sched_yield(&mut caller).await })
    })?;
    super::threads::link(&mut l)?;
    Ok((l, names))
}

/// Socket calls whose signature differs between the ABIs guests use: the
/// Rust crate `wasmedge_wasi_socket` (WasmEdge's older forms) and preview1 /
/// github.com/dispatchrun/net. The import's parameter count tells which one
/// a module wants. Returns false for other names (and unknown arities).
fn define_by_arity(l: &mut Linker<NodeCtx>, name: &str, params: usize) -> wasmtime::Result<bool> {
    match (name, params) {
        // preview1: (fd, fdflags, *newfd)
        ("sock_accept", 3) => {
            l.func_wrap_async(WASI, "sock_accept", |mut caller: Caller<'_, NodeCtx>, (f, fl, o): (i32, i32, i32)| {
                Box::new(async move { sock::sock_accept(&mut caller, f as u32, fl as u16, o as u32).await })
            })?;
        }
        // WasmEdge's older form: (fd, *newfd); the new socket blocks.
        ("sock_accept", 2) => {
            l.func_wrap_async(WASI, "sock_accept", |mut caller: Caller<'_, NodeCtx>, (f, o): (i32, i32)| {
                Box::new(async move { sock::sock_accept(&mut caller, f as u32, 0, o as u32).await })
            })?;
        }
        // (fd, *{buf,len}, *port): family (u16) then the IP at buf.
        ("sock_getlocaladdr" | "sock_getpeeraddr", 3) => {
            let peer = name == "sock_getpeeraddr";
            l.func_wrap(WASI, if peer { "sock_getpeeraddr" } else { "sock_getlocaladdr" }, move |mut caller: Caller<'_, NodeCtx>, f: i32, a: i32, p: i32| -> wasmtime::Result<i32> {
                let e = host(&mut caller, |cx| sock::sock_addr(cx, f as u32, peer, a as u32, None, p as u32));
                crashed(&caller)?;
                Ok(i32::from(e))
            })?;
        }
        // (fd, *{buf,len}, *addr_type, *port): the raw IP at buf, the type apart.
        ("sock_getlocaladdr" | "sock_getpeeraddr", 4) => {
            let peer = name == "sock_getpeeraddr";
            l.func_wrap(WASI, if peer { "sock_getpeeraddr" } else { "sock_getlocaladdr" }, move |mut caller: Caller<'_, NodeCtx>, f: i32, a: i32, t: i32, p: i32| -> wasmtime::Result<i32> {
                let e = host(&mut caller, |cx| sock::sock_addr(cx, f as u32, peer, a as u32, Some(t as u32), p as u32));
                crashed(&caller)?;
                Ok(i32::from(e))
            })?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Defines every import of `module` the linker lacks as a function that logs
/// its first use in the trace and returns ENOSYS (or zeros, for a function
/// that does not return an errno). A guest never fails to link or traps
/// because this host lacks a call; it sees an error it can handle.
pub fn stub_unknown_imports(l: &mut Linker<NodeCtx>, names: &BTreeSet<&'static str>, module: &Module) -> wasmtime::Result<()> {
    for import in module.imports() {
        let ExternType::Func(ty) = import.ty() else { continue };
        if import.module() == WASI && define_by_arity(l, import.name(), ty.params().len())? {
            continue;
        }
        if import.module() == WASI && names.contains(import.name()) {
            continue;
        }
        if import.module() == crate::abi::MODULE && names.contains(format!("seedfall::{}", import.name()).as_str()) {
            continue;
        }
        // Guest threads' calls (`wasi::threads`), defined for every module.
        use crate::threads::{MODULE as FUTEX_MODULE, SPAWN, SPAWN_LEGACY, SPAWN_MODULE};
        if (import.module() == SPAWN_MODULE && [SPAWN, SPAWN_LEGACY].contains(&import.name())) || import.module() == FUTEX_MODULE {
            continue;
        }
        let call = format!("{}::{}", import.module(), import.name());
        let errno_value = UNSUPPORTED
            .iter()
            .find(|(n, _)| *n == import.name() && import.module() == WASI)
            .map(|_| errno::NOTSUP)
            .unwrap_or(errno::NOSYS);
        let results: Vec<ValType> = ty.results().collect();
        l.func_new(import.module(), import.name(), ty.clone(), move |mut caller: Caller<'_, NodeCtx>, _params: &[Val], out: &mut [Val]| {
            host(&mut caller, |cx| cx.world.unsupported(cx.node.idx, &call));
            for (slot, t) in out.iter_mut().zip(&results) {
                *slot = match t {
                    ValType::I32 => Val::I32(i32::from(errno_value)),
                    ValType::I64 => Val::I64(0),
                    ValType::F32 => Val::F32(0),
                    ValType::F64 => Val::F64(0),
                    _ => Val::null_extern_ref(),
                };
            }
            Ok(())
        })?;
    }
    Ok(())
}
