//! The trainer executable, `dhumbal-train`: the only program that links libtorch. A process
//! without a training backend (`dhumbal-run`, the Python package) runs it as a child to train
//! networks; this module says where it is.

use std::path::PathBuf;

/// The trainer's file name.
pub const NAME: &str = "dhumbal-train";

/// The trainer to run: `$DHUMBAL_TRAIN` when set (a path to the executable), else the one
/// beside this program (where `cargo build` and scripts/run.sh put it; for a test binary in
/// cargo's `target/<profile>/deps/`, the one in `target/<profile>/`), else the first on PATH.
/// `None` when there is none.
pub fn locate() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("DHUMBAL_TRAIN").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    let beside = std::env::current_exe().ok().and_then(|exe| {
        let dir = exe.parent()?;
        let dir = match dir.file_name() {
            Some(name) if name == "deps" => dir.parent()?,
            _ => dir,
        };
        Some(dir.join(NAME)).filter(|p| p.is_file())
    });
    beside.or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(NAME))
            .find(|p| p.is_file())
    })
}

/// Whether networks can be trained from this process: here (a backend installed), or by the
/// trainer executable.
pub fn can_train() -> bool {
    dhumbal_learn::can_train() || locate().is_some()
}
