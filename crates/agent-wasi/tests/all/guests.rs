//! Test guests, written in WAT against WASI preview 1, and helpers to prepare and run them.
//!
//! Memory layout shared by the guests: 0..64 scratch (iovec at 0, nwritten at 8, opened fd at
//! 12, sizes at 16 and 20, read iovec at 32, nread at 40), poll subscription at 64 and event at
//! 256, constant data from 1024, argv pointers at 4096, argv strings at 8192, environ pointers at
//! 16384, environ strings at 20480, I/O buffer at 32768 (16 KiB).

use std::path::Path;

use agent_wasi::{CommandInput, CommandOutput, PreparedModule, Runtime, RuntimeConfig};
use sha2::{Digest, Sha256};

/// Imports and helper functions every guest starts with; a guest is `module(body)`.
const PRELUDE: &str = r#"
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) " \n")

  ;; Writes len bytes at ptr to fd; returns the errno.
  (func $write (param $fd i32) (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))

  ;; Exits with the errno when it is not 0.
  (func $check (param $errno i32)
    (if (local.get $errno) (then (call $proc_exit (local.get $errno)))))

  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $end
      (loop $next
        (br_if $end (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))

  ;; Loads argv into memory; returns argc.
  (func $args (result i32)
    (call $check (call $args_sizes_get (i32.const 16) (i32.const 20)))
    (call $check (call $args_get (i32.const 4096) (i32.const 8192)))
    (i32.load (i32.const 16)))

  ;; Pointer to argv[i].
  (func $arg (param $i i32) (result i32)
    (i32.load (i32.add (i32.const 4096) (i32.shl (local.get $i) (i32.const 2)))))
"#;

/// A module: the prelude, then `body` (functions, data, the `_start` export).
pub fn module(body: &str) -> String {
    format!("(module {PRELUDE} {body})")
}

/// `echo`: writes argv[1..] separated by spaces, then a newline.
pub fn echo() -> String {
    module(
        r#"
  (func (export "_start")
    (local $argc i32) (local $i i32) (local $p i32)
    (local.set $argc (call $args))
    (local.set $i (i32.const 1))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $argc)))
        (if (i32.gt_u (local.get $i) (i32.const 1))
          (then (call $check (call $write (i32.const 1) (i32.const 1024) (i32.const 1)))))
        (local.set $p (call $arg (local.get $i)))
        (call $check (call $write (i32.const 1) (local.get $p) (call $strlen (local.get $p))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $check (call $write (i32.const 1) (i32.const 1025) (i32.const 1))))"#,
    )
}

/// `args`: writes the raw argv strings, each followed by NUL.
pub fn args() -> String {
    module(
        r#"
  (func (export "_start")
    (drop (call $args))
    (call $check (call $write (i32.const 1) (i32.const 8192) (i32.load (i32.const 20)))))"#,
    )
}

/// `env`: writes the raw environment, each `NAME=value` followed by NUL.
pub fn env() -> String {
    module(
        r#"
  (func (export "_start")
    (call $check (call $environ_sizes_get (i32.const 16) (i32.const 20)))
    (call $check (call $environ_get (i32.const 16384) (i32.const 20480)))
    (call $check (call $write (i32.const 1) (i32.const 20480) (i32.load (i32.const 20)))))"#,
    )
}

/// `cat [PATH]`: copies PATH (opened relative to the preopen, fd 3, following symlinks) or
/// stdin to stdout; exits with the errno of a failed call.
pub fn cat() -> String {
    module(
        r#"
  (func (export "_start")
    (local $fd i32) (local $p i32) (local $n i32)
    (if (i32.ge_u (call $args) (i32.const 2))
      (then
        (local.set $p (call $arg (i32.const 1)))
        (call $check (call $path_open
          (i32.const 3) (i32.const 1) (local.get $p) (call $strlen (local.get $p))
          (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 12)))
        (local.set $fd (i32.load (i32.const 12)))))
    (loop $more
      (i32.store (i32.const 32) (i32.const 32768))
      (i32.store (i32.const 36) (i32.const 16384))
      (call $check (call $fd_read (local.get $fd) (i32.const 32) (i32.const 1) (i32.const 40)))
      (local.set $n (i32.load (i32.const 40)))
      (if (local.get $n)
        (then
          (call $check (call $write (i32.const 1) (i32.const 32768) (local.get $n)))
          (br $more)))))"#,
    )
}

/// `write PATH TEXT`: creates (or truncates) PATH and writes TEXT to it.
pub fn write_file() -> String {
    module(
        r#"
  (func (export "_start")
    (local $p i32) (local $text i32)
    (drop (call $args))
    (local.set $p (call $arg (i32.const 1)))
    (local.set $text (call $arg (i32.const 2)))
    ;; oflags CREAT | TRUNC, rights FD_WRITE
    (call $check (call $path_open
      (i32.const 3) (i32.const 0) (local.get $p) (call $strlen (local.get $p))
      (i32.const 9) (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 12)))
    (call $check (call $write (i32.load (i32.const 12)) (local.get $text) (call $strlen (local.get $text)))))"#,
    )
}

/// `open-forever`: opens the file `f` again and again, writing `x` to stdout after each open.
pub fn open_forever() -> String {
    module(
        r#"
  (data (i32.const 1100) "f")
  (func (export "_start")
    (loop $again
      (call $check (call $path_open
        (i32.const 3) (i32.const 0) (i32.const 1100) (i32.const 1)
        (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 12)))
      (call $check (call $write (i32.const 1) (i32.const 1200) (i32.const 1)))
      (br $again)))
  (data (i32.const 1200) "x")"#,
    )
}

/// `flood FD`: writes `y\n` lines to FD in 4 KiB writes forever; exits with the errno of the
/// first failed write.
pub fn flood(fd: u32) -> String {
    module(&format!(
        r#"
  (func (export "_start")
    (local $i i32)
    (loop $fill
      (i32.store16 (i32.add (i32.const 32768) (local.get $i)) (i32.const 0x0a79))
      (local.set $i (i32.add (local.get $i) (i32.const 2)))
      (br_if $fill (i32.lt_u (local.get $i) (i32.const 4096))))
    (loop $again
      (call $check (call $write (i32.const {fd}) (i32.const 32768) (i32.const 4096)))
      (br $again)))"#
    ))
}

/// `sleep`: one `poll_oneoff` on a relative monotonic clock of `nanos`, then exit 0.
pub fn sleep(nanos: u64) -> String {
    module(&format!(
        r#"
  (func (export "_start")
    (i32.store8 (i32.const 72) (i32.const 0))       ;; tag: clock
    (i32.store (i32.const 80) (i32.const 1))        ;; clock id: monotonic
    (i64.store (i32.const 88) (i64.const {nanos}))  ;; timeout
    (i64.store (i32.const 96) (i64.const 0))        ;; precision
    (i32.store16 (i32.const 104) (i32.const 0))     ;; flags: relative
    (call $check (call $poll_oneoff (i32.const 64) (i32.const 256) (i32.const 1) (i32.const 12))))"#
    ))
}

/// A module whose `_start` is `body` alone (no prelude), for loops, traps and memory.
pub fn bare(body: &str) -> String {
    format!(r#"(module (memory (export "memory") 1) {body})"#)
}

/// The sha256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Compiles WAT to wasm bytes and their digest.
pub fn wasm(wat: &str) -> (Vec<u8>, String) {
    let bytes = wat::parse_str(wat).expect("valid WAT");
    let sha = sha256_hex(&bytes);
    (bytes, sha)
}

/// A runtime with defaults (no disk cache).
pub fn runtime() -> Runtime {
    Runtime::new(RuntimeConfig::default()).expect("runtime")
}

/// Prepares a WAT module.
pub fn prepare(runtime: &Runtime, wat: &str) -> PreparedModule {
    let (bytes, sha) = wasm(wat);
    runtime.prepare(&bytes, &sha).expect("prepare")
}

/// Runs `input` in `workspace`, panicking on a host-side error.
pub fn run(
    runtime: &Runtime,
    module: &PreparedModule,
    input: CommandInput,
    workspace: &Path,
) -> CommandOutput {
    runtime.run(module, input, workspace).expect("run")
}

/// Stdout and stderr as text, for assertion messages.
pub fn describe(output: &CommandOutput) -> String {
    format!(
        "exit {} stdout {:?} stderr {:?} meta {:?}",
        output.exit_code,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        output.meta
    )
}
