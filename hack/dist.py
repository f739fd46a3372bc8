#!/usr/bin/env python3
"""Release archives, their checksums and the krew manifest: the one code path
of `make dist`, of the release workflow and of the packaging tests.

    hack/dist.py package --profile release [--target TRIPLE] [--target-dir DIR] --out dist
    hack/dist.py index --out dist [--url-base URL]
    hack/dist.py krew-template            # prints .krew.yaml (krew-release-bot's template)

`package` takes the two binaries cargo built in PROFILE (`make dist` builds
release; the tests pass `testing`, so `make test` never builds release),
strips copies of them, asks them for their completions and manual pages, and
writes dist/verify-pods-vVERSION-TARGET.tar.gz (one top folder of the same
name) and ARCHIVE.sha256. The archive is the same bytes on every run: sorted
entries, mtime SOURCE_DATE_EPOCH (else the last commit's time), owner 0:0 with
no names, fixed modes, gzip without a name or time.

`index` writes sha256.sum (every archive of this version, `sha256sum -c`
reads it) and verify-pods.yaml, the krew Plugin manifest, from the archives
in the folder: one platform per os/arch, a musl build preferred over a gnu
one (it runs on any Linux). URL base: --url-base, else the GitHub release of
`repository` in Cargo.toml.

Python's standard library only: the macOS runners have no GNU tar.
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "verify-pods"
BINARIES = ["verify-pods", "kubectl-verify_pods"]
# The krew plugin `verify-pods` runs the file kubectl-verify_pods.
PLUGIN_BIN = "kubectl-verify_pods"
DOCS = ["LICENSE", "README.md", "CHANGELOG.md"]
COMPLETIONS = {  # shell → file name in completions/ (where each shell looks)
    "bash": "verify-pods.bash",
    "zsh": "_verify-pods",
    "fish": "verify-pods.fish",
}
# What the release workflow builds (.github/workflows/release.yml's matrix
# lists the same; the tests compare), with krew's os/arch for each.
RELEASE_TARGETS = {
    "x86_64-unknown-linux-gnu": ("linux", "amd64"),
    "x86_64-unknown-linux-musl": ("linux", "amd64"),
    "aarch64-unknown-linux-gnu": ("linux", "arm64"),
    "aarch64-unknown-linux-musl": ("linux", "arm64"),
    "x86_64-apple-darwin": ("darwin", "amd64"),
    "aarch64-apple-darwin": ("darwin", "arm64"),
}
KREW_API = "krew.googlecontainertools.github.com/v1alpha2"
KREW_SHORT = "Check that every pod got scheduled, and say why not"


def fail(message):
    print(f"dist: {message}", file=sys.stderr)
    sys.exit(1)


def cargo_toml():
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)


def version():
    return cargo_toml()["workspace"]["package"]["version"]


def repository():
    return cargo_toml()["workspace"]["package"]["repository"].rstrip("/")


def description():
    with open(ROOT / "cli" / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["package"]["description"]


def archive_stem(target, tag=None):
    return f"{NAME}-{tag or 'v' + version()}-{target}"


def host_target():
    out = subprocess.run(["rustc", "-vV"], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("host: "):
            return line[len("host: "):]
    fail("rustc -vV names no host")


def source_date_epoch():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return int(epoch)
    git = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
                         capture_output=True, text=True)
    return int(git.stdout.strip()) if git.returncode == 0 and git.stdout.strip() else 0


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(binary, *args):
    return subprocess.run([str(binary), *args], check=True, capture_output=True).stdout


def stage(bin_dir, top):
    """The archive's files under `top`: {relative path: (bytes, mode)}."""
    files = {}
    for name in BINARIES:
        source = bin_dir / name
        if not source.is_file():
            fail(f"{source} is missing: build it first (make dist builds it)")
        files[name] = (source, 0o755)
    for name in DOCS:
        files[name] = (ROOT / name, 0o644)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        stripped = {}
        for name in BINARIES:
            copy = tmp / name
            shutil.copyfile(bin_dir / name, copy)
            copy.chmod(0o755)
            # The host's strip: the release workflow builds every target on
            # a runner of its own os and arch.
            subprocess.run([os.environ.get("STRIP", "strip"), str(copy)], check=True)
            stripped[name] = copy
        tool = stripped["verify-pods"]
        said = run(tool, "--version").decode().split()
        if said[:2] != [NAME, version()]:
            fail(f"{bin_dir / 'verify-pods'} says {' '.join(said)!r}, not version {version()}")
        contents = {name: (path.read_bytes(), mode) for name, (path, mode) in files.items()}
        contents.update({name: (path.read_bytes(), 0o755) for name, path in stripped.items()})
        for shell, file in COMPLETIONS.items():
            contents[f"completions/{file}"] = (run(tool, "completions", shell), 0o644)
        man = tmp / "man"
        man.mkdir()
        run(tool, "man", str(man))
        for page in sorted(man.iterdir()):
            contents[f"man/{page.name}"] = (page.read_bytes(), 0o644)
    return {f"{top}/{name}": value for name, value in contents.items()}


def write_tar_gz(path, entries, mtime):
    """entries: {path: (bytes, mode)}; directories are added, all sorted."""
    dirs = set()
    for name in entries:
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(dirs | set(entries)):
            info = tarfile.TarInfo(name)
            info.mtime = mtime
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if name in dirs:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                data, mode = entries[name]
                info.mode = mode
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    with open(path, "wb") as out:
        # filename="" and mtime=0: `gzip -n`, no name or time in the header.
        with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
            gz.write(raw.getvalue())


def package(args):
    target = args.target or host_target()
    profile_dir = {"dev": "debug", "test": "debug", "bench": "release"}.get(args.profile, args.profile)
    target_dir = Path(args.target_dir or os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    bin_dir = target_dir / args.target / profile_dir if args.target else target_dir / profile_dir
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = archive_stem(target)
    archive = out / f"{stem}.tar.gz"
    write_tar_gz(archive, stage(bin_dir, stem), source_date_epoch())
    (out / f"{archive.name}.sha256").write_text(f"{sha256(archive)}  {archive.name}\n")
    print(archive)


def archives(out):
    """{target: archive path} of this version's archives in `out`."""
    prefix = f"{NAME}-v{version()}-"
    found = {}
    for path in sorted(out.glob(f"{prefix}*.tar.gz")):
        target = path.name[len(prefix):-len(".tar.gz")]
        recorded = (out / f"{path.name}.sha256").read_text().split()
        if recorded != [sha256(path), path.name]:
            fail(f"{path.name}.sha256 does not match {path.name}")
        found[target] = path
    if not found:
        fail(f"no {prefix}*.tar.gz in {out}: run `hack/dist.py package` first")
    return found


def krew_platforms(targets):
    """One target per krew os/arch, musl before gnu; [(os, arch, target)]."""
    chosen = {}
    for target in sorted(targets, key=lambda t: (not t.endswith("-musl"), t)):
        if target not in RELEASE_TARGETS:
            fail(f"{target} has no krew platform (hack/dist.py RELEASE_TARGETS)")
        chosen.setdefault(RELEASE_TARGETS[target], target)
    return sorted((os_, arch, target) for (os_, arch), target in chosen.items())


def krew_manifest(platforms, tag, uri_and_sha):
    """The manifest's text; uri_and_sha(target) gives the platform's
    `uri:`/`sha256:` lines (real ones, or krew-release-bot's template call)."""
    q = json.dumps  # a JSON string is a YAML double-quoted scalar
    lines = [
        f"apiVersion: {KREW_API}",
        "kind: Plugin",
        "metadata:",
        f"  name: {NAME}",
        "spec:",
        f"  version: {q(tag)}",
        f"  homepage: {q(repository())}",
        f"  shortDescription: {q(KREW_SHORT)}",
        f"  description: {q(description())}",
        "  platforms:",
    ]
    for os_, arch, target in platforms:
        lines += [
            "  - selector:",
            "      matchLabels:",
            f"        os: {os_}",
            f"        arch: {arch}",
            *(f"    {line}" for line in uri_and_sha(target)),
            f"    bin: {q(archive_stem(target, tag) + '/' + PLUGIN_BIN)}",
        ]
    return "\n".join(lines) + "\n"


def index(args):
    out = Path(args.out)
    found = archives(out)
    (out / "sha256.sum").write_text(
        "".join(f"{sha256(path)}  {path.name}\n" for path in found.values()))
    base = (args.url_base or f"{repository()}/releases/download/v{version()}").rstrip("/")

    def uri_and_sha(target):
        path = found[target]
        return [f"uri: {json.dumps(base + '/' + path.name)}", f"sha256: {json.dumps(sha256(path))}"]

    manifest = krew_manifest(krew_platforms(found), f"v{version()}", uri_and_sha)
    (out / f"{NAME}.yaml").write_text(manifest)
    print(out / f"{NAME}.yaml")


def krew_template(_args):
    """krew-release-bot's .krew.yaml: the manifest of every release target,
    its uri/sha256 filled in by the bot's addURIAndSha from the release."""
    def uri_and_sha(target):
        tag = "{{ .TagName }}"
        url = f"{repository()}/releases/download/{tag}/{archive_stem(target, tag)}.tar.gz"
        return [f'{{{{addURIAndSha "{url}" .TagName }}}}']

    text = krew_manifest(krew_platforms(RELEASE_TARGETS), "{{ .TagName }}", uri_and_sha)
    sys.stdout.write("# Written by `hack/dist.py krew-template`: krew-release-bot's template.\n" + text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("package", help="one target's archive and ARCHIVE.sha256")
    p.add_argument("--profile", required=True, help="the cargo profile the binaries were built in")
    p.add_argument("--target", help="the target triple they were built for (--target); default the host")
    p.add_argument("--target-dir", help="cargo's target directory (default CARGO_TARGET_DIR, else target)")
    p.add_argument("--out", required=True)
    p.set_defaults(run=package)
    p = sub.add_parser("index", help="sha256.sum and the krew manifest of the archives in --out")
    p.add_argument("--out", required=True)
    p.add_argument("--url-base", help="where the archives are downloaded from")
    p.set_defaults(run=index)
    p = sub.add_parser("krew-template", help="print krew-release-bot's .krew.yaml")
    p.set_defaults(run=krew_template)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
