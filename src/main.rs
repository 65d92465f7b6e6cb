//! The `dhumbal-run` binary: a thin shell over the library's CLI module.

fn main() -> std::process::ExitCode {
    dhumbal::cli::main()
}
