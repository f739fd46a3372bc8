//! Pointing the real kubectl at a replay server: a throw-away kubeconfig, an
//! isolated HOME and discovery cache, and a `kubectl` first on PATH.

use std::env;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// Environment variable that names the kubectl the tests run.
pub const KUBECTL_ENV: &str = "VERIFY_PODS_TEST_KUBECTL";

/// The kubectl the tests run: `$VERIFY_PODS_TEST_KUBECTL`, else `kubectl`
/// from PATH, the one users run. (No machine's path is assumed: a
/// dispatcher such as the google-cloud-sdk's costs one `/version` round trip
/// per call, which the replay server answers.)
pub fn kubectl_binary() -> PathBuf {
    if let Some(path) = env::var_os(KUBECTL_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    find_on_path("kubectl").expect("kubectl is not installed (make tools installs it)")
}

/// An executable named `name` on PATH.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// A private kubectl world for one server: kubeconfig, HOME, cache, PATH.
#[derive(Debug)]
pub struct KubeEnv {
    dir: TempDir,
    /// The kubeconfig (server = the replay server, no credentials).
    pub kubeconfig: PathBuf,
    /// A `bin/` with `kubectl` (a symlink to the chosen binary).
    pub bin_dir: PathBuf,
    /// `bin_dir/kubectl`.
    pub kubectl_path: PathBuf,
}

impl KubeEnv {
    /// An environment for the server at `url` with [`kubectl_binary`].
    pub fn new(url: &str) -> io::Result<Self> {
        Self::with_kubectl(url, &kubectl_binary())
    }

    /// An environment for the server at `url` with this kubectl binary.
    pub fn with_kubectl(url: &str, kubectl: &Path) -> io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("replay-kube-").tempdir()?;
        let kubeconfig = dir.path().join("kubeconfig");
        fs::write(&kubeconfig, kubeconfig_text(url))?;
        fs::create_dir_all(dir.path().join("home"))?;
        fs::create_dir_all(dir.path().join("cache"))?;
        let bin_dir = dir.path().join("bin");
        fs::create_dir_all(&bin_dir)?;
        let kubectl_path = bin_dir.join("kubectl");
        symlink(kubectl, &kubectl_path)?;
        Ok(Self {
            dir,
            kubeconfig,
            bin_dir,
            kubectl_path,
        })
    }

    /// The temporary folder (scratch space for a test).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Point `cmd` at the server: HOME, KUBECONFIG, KUBECACHEDIR, `kubectl`
    /// first on PATH, no colour, none of the caller's KWOK_VERIFY_PODS_*,
    /// and Go runtime settings that make kubectl cheaper.
    pub fn apply<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        for (name, _) in env::vars_os() {
            if name.to_string_lossy().starts_with("KWOK_VERIFY_PODS_") {
                cmd.env_remove(name);
            }
        }
        let mut path = OsString::from(&self.bin_dir);
        if let Some(rest) = env::var_os("PATH") {
            path.push(":");
            path.push(rest);
        }
        // kubectl lives for a fraction of a second: without its garbage
        // collector and with one OS thread it costs about a quarter less CPU
        // on the shared cores, and behaves the same.
        cmd.env("GOGC", "off")
            .env("GOMAXPROCS", "1")
            .env("HOME", self.dir().join("home"))
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", self.dir().join("cache"))
            .env("PATH", path)
            .env("NO_COLOR", "1")
    }

    /// `kubectl` with this environment.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new(&self.kubectl_path);
        self.apply(&mut cmd);
        cmd
    }
}

/// A kubeconfig for the server at `url` (plain http: kubectl sends no credentials).
pub fn kubeconfig_text(url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: replay
  cluster:
    server: {url}
contexts:
- name: replay
  context:
    cluster: replay
    user: replay
current-context: replay
users:
- name: replay
  user: {{}}
"
    )
}

/// Environment variable naming another wrapper script to test in place of
/// `generated/verify-pods.sh` (e.g. a copy with a second `kubectl get pods`
/// injected, to see the race tests fail).
pub const WRAPPER_ENV: &str = "VERIFY_PODS_TEST_WRAPPER";

/// `generated/verify-pods.sh`, the runnable wrapper of the generated
/// function (or `$VERIFY_PODS_TEST_WRAPPER`).
pub fn generated_wrapper() -> PathBuf {
    match env::var_os(WRAPPER_ENV).filter(|p| !p.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => crate::workspace_root().join("generated/verify-pods.sh"),
    }
}

impl KubeEnv {
    /// `verify-pods check` (live) against the server: this kubeconfig and kubectl.
    pub fn checker(&self) -> Command {
        let mut cmd = Command::new(crate::binary("verify-pods"));
        self.apply(&mut cmd);
        cmd.arg("check")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--kubectl")
            .arg(&self.kubectl_path);
        cmd
    }

    /// `bash generated/verify-pods.sh` against the server (kubectl from PATH,
    /// KUBECONFIG from the environment).
    pub fn wrapper(&self) -> Command {
        let mut cmd = Command::new("bash");
        self.apply(&mut cmd);
        cmd.arg(generated_wrapper());
        cmd
    }
}

/// Run `work` on every item with `workers` threads; results in item order.
pub fn in_parallel<T: Send, R: Send>(
    items: Vec<T>,
    workers: usize,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    use std::sync::Mutex;
    let queue = Mutex::new(items.into_iter().enumerate());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers.max(1) {
            scope.spawn(|| loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                let Some((index, item)) = next else { return };
                let result = work(item);
                results
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((index, result));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}
