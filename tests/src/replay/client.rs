//! Pointing the real kubectl at a replay server: a throw-away kubeconfig, an
//! isolated HOME and discovery cache, and a `kubectl` first on PATH.

use std::env;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
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

/// The directory of the real kubectl on PATH (the one users run): a
/// PATH of a plugin's directory and this one lets kubectl find the plugin.
pub fn real_kubectl_dir() -> PathBuf {
    let kubectl =
        find_on_path("kubectl").expect("kubectl is not installed (make tools installs it)");
    kubectl
        .parent()
        .expect("a file on PATH has a directory")
        .to_owned()
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

/// How a [`KubeEnv`] reaches its server, beyond the URL.
#[derive(Debug, Clone, Default)]
pub struct KubeOptions {
    /// The kubectl binary (None = [`kubectl_binary`]).
    pub kubectl: Option<PathBuf>,
    /// The certificate to trust (https servers: [`super::Server::ca_pem`]).
    pub ca_pem: Option<String>,
    /// A static bearer token for the kubeconfig's user.
    pub token: Option<String>,
    /// An exec credential plugin for the kubeconfig's user instead.
    pub exec_plugin: Option<ExecPlugin>,
}

/// A kubeconfig user's exec credential plugin (EKS' `aws eks get-token`,
/// GKE's `gke-gcloud-auth-plugin`): a script that takes `delay`, then
/// prints an `ExecCredential` with `token`. kubectl runs it once per
/// process; each run is logged (see [`KubeEnv::exec_plugin_runs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecPlugin {
    /// How long each run takes.
    pub delay: Duration,
    /// The token it hands kubectl.
    pub token: String,
}

impl KubeOptions {
    /// Options to reach `server`: its certificate, and its token (as a
    /// static token) when it requires one.
    pub fn for_server(server: &super::Server) -> Self {
        Self {
            ca_pem: server.ca_pem().map(str::to_owned),
            token: server.token(),
            ..Self::default()
        }
    }

    /// Options to reach `server` (its certificate) as a user whose token an
    /// exec credential plugin hands kubectl: `token`, after `delay`.
    pub fn with_exec_plugin(server: &super::Server, token: &str, delay: Duration) -> Self {
        Self {
            ca_pem: server.ca_pem().map(str::to_owned),
            exec_plugin: Some(ExecPlugin {
                delay,
                token: token.to_owned(),
            }),
            ..Self::default()
        }
    }
}

/// Write `kubeconfig` for the server at `url`, with what `options` ask
/// beside it: `KUBECONFIG.ca.crt`, and `KUBECONFIG.exec-plugin` (which
/// appends a line to `KUBECONFIG.exec-plugin.log` on each run).
pub fn write_kubeconfig(kubeconfig: &Path, url: &str, options: &KubeOptions) -> io::Result<()> {
    let beside = |suffix: &str| {
        let mut name = kubeconfig.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let mut cluster = format!("    server: {url}\n");
    if let Some(pem) = &options.ca_pem {
        let ca = beside(".ca.crt");
        fs::write(&ca, pem)?;
        cluster.push_str(&format!("    certificate-authority: {}\n", ca.display()));
    }
    let user = match (&options.exec_plugin, &options.token) {
        (Some(plugin), _) => {
            let script = beside(".exec-plugin");
            write_exec_plugin(&script, &beside(".exec-plugin.log"), plugin)?;
            format!(
                "\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
                script.display()
            )
        }
        (None, Some(token)) => format!("\n    token: {token}\n"),
        (None, None) => " {}\n".to_owned(),
    };
    fs::write(kubeconfig, kubeconfig_yaml(&cluster, &user))
}

fn write_exec_plugin(script: &Path, log: &Path, plugin: &ExecPlugin) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let credential = format!(
        r#"{{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{{"token":"{}"}}}}"#,
        plugin.token
    );
    let text = format!(
        "#!/bin/sh\n# An exec credential plugin that takes {ms} ms, like a cloud provider's.\n\
         echo run >> '{log}'\nsleep {secs}\nprintf '%s\\n' '{credential}'\n",
        ms = plugin.delay.as_millis(),
        log = log.display(),
        secs = plugin.delay.as_secs_f64(),
    );
    fs::write(script, text)?;
    fs::set_permissions(script, fs::Permissions::from_mode(0o755))
}

impl KubeEnv {
    /// An environment for the server at `url` with [`kubectl_binary`].
    pub fn new(url: &str) -> io::Result<Self> {
        Self::with_options(url, &KubeOptions::default())
    }

    /// An environment for `server` (its certificate and token when it has them).
    pub fn for_server(server: &super::Server) -> io::Result<Self> {
        Self::with_options(&server.url(), &KubeOptions::for_server(server))
    }

    /// An environment for the server at `url` with this kubectl binary.
    pub fn with_kubectl(url: &str, kubectl: &Path) -> io::Result<Self> {
        Self::with_options(
            url,
            &KubeOptions {
                kubectl: Some(kubectl.to_owned()),
                ..KubeOptions::default()
            },
        )
    }

    /// An environment for the server at `url` as `options` say.
    pub fn with_options(url: &str, options: &KubeOptions) -> io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("replay-kube-").tempdir()?;
        let kubeconfig = dir.path().join("kubeconfig");
        write_kubeconfig(&kubeconfig, url, options)?;
        fs::create_dir_all(dir.path().join("home"))?;
        fs::create_dir_all(dir.path().join("cache"))?;
        let bin_dir = dir.path().join("bin");
        fs::create_dir_all(&bin_dir)?;
        let kubectl_path = bin_dir.join("kubectl");
        let kubectl = options.kubectl.clone().unwrap_or_else(kubectl_binary);
        symlink(kubectl, &kubectl_path)?;
        Ok(Self {
            dir,
            kubeconfig,
            bin_dir,
            kubectl_path,
        })
    }

    /// How many times the exec credential plugin ran so far.
    pub fn exec_plugin_runs(&self) -> usize {
        let log = self.dir().join("kubeconfig.exec-plugin.log");
        fs::read_to_string(log).map_or(0, |text| text.lines().count())
    }

    /// The temporary folder (scratch space for a test).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Point `cmd` at the server: HOME, KUBECONFIG, KUBECACHEDIR, `kubectl`
    /// first on PATH, no colour, none of the caller's KWOK_VERIFY_PODS_*,
    /// and Go runtime settings that make kubectl cheaper.
    pub fn apply<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        crate::without_user_settings(cmd);
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
    kubeconfig_yaml(&format!("    server: {url}\n"), " {}\n")
}

fn kubeconfig_yaml(cluster: &str, user: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: replay
  cluster:
{cluster}contexts:
- name: replay
  context:
    cluster: replay
    user: replay
current-context: replay
users:
- name: replay
  user:{user}"
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
