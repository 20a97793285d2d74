//! Building an example from inside a test, with the test's own target folder and profile.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variables `cargo test` hands a test about the package under test. A dependency's build
/// script that watches one of them (ring's does) would see it change in a nested build and run
/// again, rebuilding everything above it there and once more in the next `cargo test`, so the
/// nested build runs without them.
const PACKAGE_VARIABLES: [&str; 7] = [
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "OUT_DIR",
];

/// A `cargo build --example` run from inside a test binary, so that the test can run the
/// example as a user would. The build uses the test's own target folder and profile (found from
/// the test binary's path, `<target>/<profile>/deps/<test>`), so it reuses what `cargo test`
/// built, and leaves out the package variables `cargo test` sets for the test (see
/// [`build`](Self::build)).
///
/// # Examples
///
/// ```no_run
/// use abi_testkit::ExampleBuild;
///
/// let bin = ExampleBuild::new(env!("CARGO_MANIFEST_DIR"), "lucene_index")
///     .package("async-buffered-input")
///     .features(cfg!(feature = "object-store").then_some("object-store"))
///     .build();
/// assert!(bin.is_file());
/// ```
#[derive(Clone, Debug)]
#[must_use = "an ExampleBuild does nothing until `build` is called"]
pub struct ExampleBuild {
    manifest_dir: PathBuf,
    example: String,
    package: Option<String>,
    features: Vec<String>,
    all_features: bool,
}

impl ExampleBuild {
    /// A build of `example` of the package in `manifest_dir` (pass the test's
    /// `env!("CARGO_MANIFEST_DIR")`).
    pub fn new(manifest_dir: impl Into<PathBuf>, example: &str) -> Self {
        Self {
            manifest_dir: manifest_dir.into(),
            example: example.to_owned(),
            package: None,
            features: Vec::new(),
            all_features: false,
        }
    }

    /// Builds the example of `package` (`-p`), for a folder that is a workspace's root.
    pub fn package(mut self, package: &str) -> Self {
        self.package = Some(package.to_owned());
        self
    }

    /// Builds with these features as well (pass the test's own, e.g.
    /// `cfg!(feature = "x").then_some("x")`, so that the build reuses what `cargo test` built).
    pub fn features<'a>(mut self, features: impl IntoIterator<Item = &'a str>) -> Self {
        self.features
            .extend(features.into_iter().map(str::to_owned));
        self
    }

    /// Builds with `--all-features` and without `-p`, as `cargo test --all-features` run in the
    /// same folder selects packages and features; pass the workspace's root folder to
    /// [`new`](Self::new) and call this when the test itself was built that way (every feature
    /// of its package on), as `.ci/run` does.
    ///
    /// Feature unification then matches the outer build's exactly, so the nested build reuses
    /// every crate it built. A build with only the test's own package and features unifies the
    /// dependencies' features differently and recompiles much of the tree (a minute per test
    /// binary on the CI machine).
    pub fn all_features(mut self, all: bool) -> Self {
        self.all_features = all;
        self
    }

    /// The command [`build`](Self::build) runs: `cargo build --quiet [-p package] --example
    /// <example> --target-dir <the test's> [--release] [--features …] [--all-features]` in the
    /// manifest folder (`-p` left out with `--all-features`),
    /// without the package variables of the test's environment.
    ///
    /// # Panics
    ///
    /// If the running test binary does not lie in `<target>/<profile>/deps/`.
    pub fn command(&self) -> Command {
        let (target_dir, profile_dir) = test_dirs();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "--quiet"]);
        if self.all_features {
            build.arg("--all-features");
        } else if let Some(package) = &self.package {
            build.args(["-p", package]);
        }
        build
            .args(["--example", &self.example, "--target-dir"])
            .arg(target_dir)
            .current_dir(&self.manifest_dir);
        if profile_dir
            .file_name()
            .is_some_and(|name| name == "release")
        {
            build.arg("--release");
        }
        if !self.features.is_empty() {
            build.args(["--features", &self.features.join(",")]);
        }
        for (key, _) in std::env::vars_os() {
            let name = key.to_string_lossy();
            if name.starts_with("CARGO_PKG_") || PACKAGE_VARIABLES.contains(&&*name) {
                build.env_remove(&key);
            }
        }
        build
    }

    /// Builds the example and returns the path of its binary.
    ///
    /// # Panics
    ///
    /// If cargo cannot be run, the build fails, or the binary is not where cargo puts it.
    pub fn build(&self) -> PathBuf {
        let status = self.command().status().expect("cargo runs");
        assert!(
            status.success(),
            "cargo build --example {} failed ({status})",
            self.example
        );
        let bin = test_dirs().1.join("examples").join(format!(
            "{}{}",
            self.example,
            std::env::consts::EXE_SUFFIX
        ));
        assert!(bin.is_file(), "{} was not built", bin.display());
        bin
    }
}

/// The target folder and the profile folder the running test binary lies in.
fn test_dirs() -> (PathBuf, PathBuf) {
    // A test runs from <target>/<profile>/deps/.
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("<target>/<profile>");
    let target_dir = profile_dir.parent().expect("<target>");
    (target_dir.to_path_buf(), profile_dir.to_path_buf())
}
