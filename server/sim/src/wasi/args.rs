//! args_* and environ_*: the node's command line and environment, from the config.
use super::errno::{self, Errno};
use super::{mem, Cx};

fn sizes(cx: &mut Cx<'_>, items: &[Vec<u8>], count_ptr: u32, size_ptr: u32) -> Errno {
    let size: usize = items.iter().map(Vec::len).sum();
    let r = mem::write_u32(cx.mem, count_ptr, items.len() as u32).and_then(|_| mem::write_u32(cx.mem, size_ptr, size as u32));
    r.err().unwrap_or(errno::SUCCESS)
}

fn copy_out(cx: &mut Cx<'_>, items: &[Vec<u8>], ptrs: u32, buf: u32) -> Errno {
    let mut at = buf;
    for (i, item) in items.iter().enumerate() {
        let mut step = || -> Result<(), Errno> {
            mem::write_u32(cx.mem, ptrs + 4 * i as u32, at)?;
            mem::bytes_mut(cx.mem, at, item.len() as u32)?.copy_from_slice(item);
            Ok(())
        };
        if let Err(e) = step() {
            return e;
        }
        at += item.len() as u32;
    }
    errno::SUCCESS
}

pub fn args_sizes_get(cx: &mut Cx<'_>, count: u32, size: u32) -> Errno {
    let args = std::mem::take(&mut cx.node.args);
    let r = sizes(cx, &args, count, size);
    cx.node.args = args;
    r
}

pub fn args_get(cx: &mut Cx<'_>, ptrs: u32, buf: u32) -> Errno {
    let args = std::mem::take(&mut cx.node.args);
    let r = copy_out(cx, &args, ptrs, buf);
    cx.node.args = args;
    r
}

pub fn environ_sizes_get(cx: &mut Cx<'_>, count: u32, size: u32) -> Errno {
    let env = std::mem::take(&mut cx.node.env);
    let r = sizes(cx, &env, count, size);
    cx.node.env = env;
    r
}

pub fn environ_get(cx: &mut Cx<'_>, ptrs: u32, buf: u32) -> Errno {
    let env = std::mem::take(&mut cx.node.env);
    let r = copy_out(cx, &env, ptrs, buf);
    cx.node.env = env;
    r
}
