//! The `coreutils` multicall binary: picks the applet from argv\[0\] (or argv\[1\] when argv\[0\]
//! is `coreutils`) through an explicit allowlist and exits with its status.

fn main() {
    std::process::exit(guest_coreutils::run(std::env::args_os().collect()));
}
