//! The `coreutils-lite` binary: the small second module with std-only `echo`, `true`, `false`,
//! `pwd`, `basename` and `dirname` (see `guest_coreutils::lite`). It only calls
//! [`guest_coreutils::lite::run_lite`], so LTO leaves every uutils crate out of it.

fn main() {
    std::process::exit(guest_coreutils::lite::run_lite(
        std::env::args_os().collect(),
    ));
}
