//! The build script of dhumbal-torch and dhumbal-trainer (its `build =`): an rpath to
//! libtorch for `dhumbal-train` and the test binaries, and `--no-as-needed` so that
//! libtorch_cuda stays linked (nothing names its symbols; without it CUDA is never seen;
//! ARCHITECTURE.md, "libtorch"). No other crate links libtorch.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath={lib}");
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
        println!("cargo:rustc-link-arg=-ltorch");
    }
}
