//! `dhumbal-train`: the `train` command of dhumbal-run with libtorch linked (the training
//! backend of `dhumbal-torch` installed before the arguments are read). dhumbal-run starts it
//! as a child process when a network must be trained; it is the only program of the project
//! that loads libtorch and the CUDA libraries.

/// mimalloc, as dhumbal-run: the episodes' records and the checkpoints are the same buffers.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    dhumbal_learn::install(dhumbal_torch::BACKEND);
    dhumbal::cli::train::trainer_main(std::env::args_os())
}
