//! The `dhumbal-run` binary: a thin shell over the library's CLI module.

/// mimalloc instead of the system allocator: record chunks are large, short-lived buffers,
/// which glibc maps and unmaps for every unit (page faults showed up in profiles), and Polars
/// recommends a modern allocator for its writers.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // No transparent huge pages for this process. mimalloc asks for them on its arenas, so a
    // fresh or purged 2 MB region is zeroed whole on first touch (and compacted for, where
    // memory is fragmented): as record buffers come and go, `clear_page` took 4-8% of a
    // million-round run's CPU in some runs and none in others. Without them the run uses half
    // the memory (67 against 120 MB) and the report no more time; nothing here gains from
    // huge pages (the engine's state is a few kilobytes). Linux only; failure changes nothing.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    // A closed pipe ends the program quietly, as it does `cat` or `grep` (`dhumbal-run
    // validate FILE | head`): Rust ignores SIGPIPE, so that a write to a closed pipe fails, and
    // `println!` panics on the failure (exit 101 with a backtrace). Here only, in the binary:
    // the Python package runs the same commands in its own process and keeps its handler. A
    // run stopped so is resumed as after any kill (`--resume`).
    // SAFETY: setting a signal's disposition to its default before any thread is started.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    dhumbal::cli::main()
}
