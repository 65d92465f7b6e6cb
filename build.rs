//! The build script of the root package, dhumbal-learn and dhumbal-runner (their `build =`).
//! With the `torch` feature: an rpath to libtorch for dhumbal-run and the test binaries, and
//! `--no-as-needed` so that libtorch_cuda stays linked (ARCHITECTURE.md, "libtorch").
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_TORCH").is_some()
        && let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB")
    {
        println!("cargo:rustc-link-arg=-Wl,-rpath={lib}");
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
        println!("cargo:rustc-link-arg=-ltorch");
    }
}
