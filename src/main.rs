//! The `dhumbal-run` binary: a thin shell over the library's CLI module.

/// mimalloc instead of the system allocator: record chunks are large, short-lived buffers,
/// which glibc maps and unmaps for every unit (page faults showed up in profiles), and Polars
/// recommends a modern allocator for its writers.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    dhumbal::cli::main()
}
