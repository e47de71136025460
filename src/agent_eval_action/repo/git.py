"""The git questions a PR check asks, through the real ``git`` command.

Functions take a :class:`Git` so tests can point it at a repository made in a temp dir.
"""

from __future__ import annotations

import base64
import hashlib
import os
import posixpath
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agent_eval_action.repo.globs import NEGATION, split
from agent_eval_action.system.errors import ConfigError, InfrastructureError


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D, R (renamed: path is the new name, old_path the old one)
    path: str
    old_path: str | None = None


# Every git command we run sees the repository's real objects and history: replace refs and
# grafts are ignored (a PR's agent that runs `git replace <baseline blob> <fake>` or writes
# .git/info/grafts must not change what we read of the base), and paths are literal (a dataset
# named `what?.json` is that file, not a pattern).
# Never a prompt: a push whose credentials are refused (or held out) fails, it does not wait for a user.
GIT_ENV = {"GIT_NO_REPLACE_OBJECTS": "1", "GIT_GRAFT_FILE": os.devnull, "GIT_LITERAL_PATHSPECS": "1", "GIT_TERMINAL_PROMPT": "0"}
# What actions/checkout persists for later steps (``persist-credentials``, its default): the
# token as an auth header, in .git/config or in a file it includes.
CREDENTIALS = r"^http\..*extraheader$"

SHALLOW_HINT = "the checkout is shallow: use actions/checkout with `fetch-depth: 0` so the base branch's history is there"


@dataclass(frozen=True)
class Git:
    cwd: Path

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = self._run(list(args), None)
        out = subprocess.CompletedProcess(done.args, done.returncode, _text(done.stdout), _text(done.stderr))
        if check and out.returncode != 0:
            raise InfrastructureError(f"git {' '.join(args)} failed: {out.stderr.strip() or out.stdout.strip()}")
        return out

    def _run(self, args: list[str], stdin: bytes | None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        """The one place git is started: with replace refs, grafts and pathspec magic off."""
        try:
            return subprocess.run(
                ["git", "--no-replace-objects", *args],
                cwd=self.cwd,
                input=stdin,
                capture_output=True,
                timeout=120,
                env={**os.environ, **GIT_ENV, **(env or {})},
            )
        except FileNotFoundError:
            raise InfrastructureError("git is not installed") from None
        except subprocess.TimeoutExpired:
            raise InfrastructureError(f"git {' '.join(args)} took longer than 120 s") from None

    def blobs(self, names: list[str]) -> dict[str, str | None]:
        """Each ``REV:PATH`` name's text (None when there is no such file), in one
        ``git cat-file --batch``: object names, never pathspecs, so no character of a path is special."""
        out: dict[str, str | None] = dict.fromkeys(names)
        batch = [name for name in out if "\n" not in name]
        for name in out.keys() - set(batch):  # the batch reads a name a line
            done = self._run(["cat-file", "blob", name], None)
            out[name] = _text(done.stdout) if done.returncode == 0 else None
        if not batch:
            return out
        done = self._run(["cat-file", "--batch"], "".join(name + "\n" for name in batch).encode())
        if done.returncode != 0:
            raise InfrastructureError(f"git cat-file --batch failed: {_text(done.stderr).strip()}")
        data, at = done.stdout, 0
        for name in batch:
            end = data.index(b"\n", at)
            header = data[at:end].split(b" ")
            at = end + 1
            if len(header) == 3 and header[2].isdigit():
                size = int(header[2])
                if header[1] == b"blob":
                    out[name] = _text(data[at : at + size])
                at += size + 1
        return out

    def blob_ids(self, names: list[str]) -> dict[str, str | None]:
        """Each ``REV:PATH`` name's blob id (git's hash of the file's bytes; None when there is no
        such file), in one ``git cat-file --batch-check``."""
        out: dict[str, str | None] = dict.fromkeys(names)
        batch = [name for name in out if "\n" not in name]
        if not batch:
            return out
        done = self._run(["cat-file", "--batch-check"], "".join(name + "\n" for name in batch).encode())
        if done.returncode != 0:
            raise InfrastructureError(f"git cat-file --batch-check failed: {_text(done.stderr).strip()}")
        for name, line in zip(batch, _text(done.stdout).splitlines(), strict=False):
            fields = line.split(" ")
            if len(fields) == 3 and fields[1] == "blob":
                out[name] = fields[0]
        return out

    def listed_files(self) -> list[str]:
        """Every file git would commit from the working tree: tracked, or untracked and not
        ignored (repository-relative); empty outside a repository."""
        done = self._run(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], None)
        return [n for n in done.stdout.decode("utf-8", "surrogateescape").split("\0") if n] if done.returncode == 0 else []

    def submodule_files(self) -> list[str]:
        """The files of the checked-out submodules, repository-relative (``listed_files`` names
        each submodule by its gitlink alone), with the repository's own tracked files."""
        done = self._run(["ls-files", "-z", "--cached", "--recurse-submodules"], None)
        return [n for n in done.stdout.decode("utf-8", "surrogateescape").split("\0") if n] if done.returncode == 0 else []

    def ignored(self, paths: list[str]) -> set[str]:
        """Which of ``paths`` (repository-relative, not tracked) git ignores."""
        if not paths:
            return set()
        done = self._run(["check-ignore", "--stdin", "-z"], "\0".join(paths).encode("utf-8", "surrogateescape") + b"\0")
        return set(done.stdout.decode("utf-8", "surrogateescape").split("\0")) - {""} if done.returncode in (0, 1) else set()

    def is_repository(self) -> bool:
        return self.run("rev-parse", "--is-inside-work-tree", check=False).returncode == 0

    def is_shallow(self) -> bool:
        return self.run("rev-parse", "--is-shallow-repository").stdout.strip() == "true"

    def resolve(self, ref: str) -> str | None:
        done = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return done.stdout.strip() if done.returncode == 0 else None

    def similar_refs(self, name: str) -> list[str]:
        """The branch and tag names closest to ``name`` (a typo's likely meaning): local ones, and a
        remote's by the name :meth:`merge_base` also finds them by (``main`` for ``origin/main``)."""
        import difflib

        done = self.run("for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags", "refs/remotes", check=False)
        names: dict[str, None] = {}
        for ref in done.stdout.splitlines() if done.returncode == 0 else []:
            kind, _, short = ref.removeprefix("refs/").partition("/")
            if kind == "remotes":
                short = short.partition("/")[2]  # origin/main -> main
            if short and short != "HEAD":
                names[short] = None
        return difflib.get_close_matches(name, list(names), n=2)

    def merge_base(self, base_ref: str) -> str:
        """The merge-base of ``base_ref`` and HEAD, with a message that says how to fix what is missing."""
        if not self.is_repository():
            raise ConfigError("--base", f"{self.cwd} is not a git repository")
        base = self.resolve(base_ref) or self.resolve(f"origin/{base_ref}")
        if base is None:
            close = [name for name in self.similar_refs(base_ref) if name != base_ref]
            meant = f"did you mean {' or '.join(repr(name) for name in close)}?" if close else ""
            if self.is_shallow():  # the likelier cause there: the ref's history was never fetched
                hint = (f" ({meant})" if meant else "") + f"; {SHALLOW_HINT}"
            else:
                hint = f" ({meant + ' else ' if meant else ''}fetch it first: `git fetch origin {base_ref.removeprefix('origin/')}`)"
            raise ConfigError("--base", f"base ref {base_ref!r} is not in this repository{hint}")
        done = self.run("merge-base", base, "HEAD", check=False)
        if done.returncode != 0:
            if self.is_shallow():
                raise ConfigError("--base", f"no common ancestor of {base_ref!r} and HEAD in the fetched history: {SHALLOW_HINT}")
            raise ConfigError("--base", f"{base_ref!r} and HEAD share no history")
        return done.stdout.strip()

    def changes(self, since: str) -> list[Change]:
        """Files changed between ``since`` and the working tree, renames detected: commits, edits
        not yet committed and new files not yet added (git does not ignore). What runs and what
        is read is the working tree, so a local check of uncommitted work must see that work; in
        CI the working tree is HEAD."""
        out = self.run("diff", "--name-status", "-M", "-z", since).stdout
        # From the top: untracked files anywhere, named from the root (the working directory may be a subfolder).
        untracked = Git(self.workspace().root).run("ls-files", "--others", "--exclude-standard", "-z").stdout
        fields = out.split("\0")
        changes: list[Change] = []
        i = 0
        while i < len(fields) - 1:
            status = fields[i]
            if status.startswith(("R", "C")):
                changes.append(Change(status="R" if status[0] == "R" else "A", path=fields[i + 2], old_path=fields[i + 1]))
                i += 3
            else:
                changes.append(Change(status=status[:1], path=fields[i + 1]))
                i += 2
        changes += [Change(status="A", path=path) for path in untracked.split("\0") if path]
        return changes

    def show(self, rev: str, path: str) -> str | None:
        """A file's text at ``rev`` (``path`` from the repository root); None when it did not exist there."""
        return self.blobs([f"{rev}:{path}"])[f"{rev}:{path}"]

    def uncommitted(self, keep: Callable[[str], bool]) -> list[str]:
        """The paths ``keep`` accepts that have changes not committed (edited, added, untracked), from the root."""
        status = self.run("status", "--porcelain", "-z", "--untracked-files=all", check=False).stdout
        return [entry[3:] for entry in status.split("\0") if len(entry) > 3 and keep(entry[3:])]

    def fingerprint(self, rev: str, keep: Callable[[str], bool], *, working_tree: bool = False) -> str | None:
        """A hash of the blobs of the paths ``keep`` accepts at ``rev`` (a git tree hash of the
        agent's code). With ``working_tree``, None when any such path has uncommitted changes:
        what runs is then not what ``rev`` holds."""
        if working_tree and self.uncommitted(keep):
            return None
        done = self.run("ls-tree", "-r", "-z", "--full-tree", rev, check=False)  # paths from the root, wherever we run
        if done.returncode != 0:
            return None
        digest = hashlib.sha256()
        for entry in sorted(done.stdout.split("\0")):
            meta, _, path = entry.partition("\t")
            if path and keep(path):
                digest.update(f"{meta.split()[-1]} {path}\n".encode())
        return digest.hexdigest()[:20]

    def trust_checkouts(self) -> None:
        """The workspace is mounted from the runner's host, owned by another user: git refuses to
        work in it unless told it is safe (this one, and any checkout below it)."""
        for directory in (str(self.cwd), "*"):
            self.run("config", "--global", "--add", "safe.directory", directory, check=False)

    def take_credentials(self) -> list[tuple[str, str, str]]:
        """Takes the checkout's credentials (:data:`CREDENTIALS`) out of the repository's git
        config, in whichever file of it they are: (file, key, value) each, for
        :meth:`put_back_credentials`. Empty when there are none."""
        done = self.run("config", "--local", "--includes", "--show-origin", "--null", "--get-regexp", CREDENTIALS, check=False)
        fields = done.stdout.split("\0")
        held = []
        for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
            key, _, value = entry.partition("\n")
            if origin.startswith("file:") and key:
                held.append((str(self.cwd / origin.removeprefix("file:")), key, value))
        for file, key in dict.fromkeys((file, key) for file, key, _ in held):
            self.run("config", "--file", file, "--unset-all", key, check=False)
        return held

    def put_back_credentials(self, held: list[tuple[str, str, str]]) -> None:
        """Puts back what :meth:`take_credentials` took, where it was."""
        for file, key, value in held:
            self.run("config", "--file", file, "--add", key, value, check=False)

    def commit_paths(self, paths: list[str], message: str, *, author: tuple[str, str]) -> bool:
        """Stages ``paths`` (deletions too) and commits them as ``author`` (name, email); False when
        nothing changed there."""
        self.run("add", "--", *paths, check=False)
        if self.run("diff", "--cached", "--quiet", "--", *paths, check=False).returncode == 0:
            return False
        self.run("-c", f"user.name={author[0]}", "-c", f"user.email={author[1]}", "commit", "-q", "-m", message, "--", *paths)
        return True

    def push(self, branch: str, token: str | None) -> str | None:
        """Pushes HEAD to ``branch`` on origin (with the token as an auth header when the checkout's
        own credentials are refused); None on success, else git's reason with the token masked."""
        done = self.run("push", "-q", "origin", f"HEAD:{branch}", check=False)
        if done.returncode != 0 and token:
            header = base64.b64encode(f"x-access-token:{token}".encode()).decode()
            done = self.run("-c", f"http.extraheader=AUTHORIZATION: basic {header}", "push", "-q", "origin", f"HEAD:{branch}", check=False)
        if done.returncode == 0:
            return None
        reason = (done.stderr or done.stdout).strip()
        return reason.replace(token, "***") if token else reason

    def export(self, rev: str, path: Path, index: Path) -> None:
        """``rev``'s files written under ``path`` as a checkout writes them (its filters and line
        endings), through a temporary index file ``index``: no worktree, no index and no ref of
        this repository leads there (``git worktree list`` does not show it)."""
        env = {"GIT_INDEX_FILE": str(index)}
        for args in (["read-tree", rev], ["checkout-index", "--all", "--force", f"--prefix={path}/"]):
            done = self._run(args, None, env)
            if done.returncode != 0:
                raise InfrastructureError(f"git {' '.join(args[:2])} failed: {_text(done.stderr).strip()}")

    def tree(self, rev: str) -> str | None:
        """The hash of ``rev``'s whole tree (equal trees: byte-identical files); None when unknown."""
        done = self.run("rev-parse", "--verify", "--quiet", f"{rev}^{{tree}}", check=False)
        return done.stdout.strip() or None if done.returncode == 0 else None

    def files(self, rev: str) -> list[str]:
        """Every file's path at ``rev``, from the repository's root."""
        done = self.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", rev)
        return [path for path in done.stdout.split("\0") if path]

    def toplevel(self) -> Path | None:
        """The repository's root directory; None outside a repository. Asked once: what this
        object found is its answer after (a check asked 14 times; and a repository the agent's
        code makes below the root while it runs does not move the root), until then asked again."""
        found = self.__dict__.get("_toplevel")
        if found is None:
            done = self.run("rev-parse", "--show-toplevel", check=False)
            if done.returncode != 0 or not done.stdout.strip():
                return None
            found = self.__dict__["_toplevel"] = Path(done.stdout.strip())
        return found

    def workspace(self) -> Workspace:
        return Workspace(root=(self.toplevel() or self.cwd).resolve(), cwd=self.cwd.resolve())


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


@dataclass
class Snapshot:
    """Files of one commit (the merge-base), read once and kept: everything the verdict reads of
    the base is loaded before any agent code runs, so nothing the agent does to ``.git`` later
    (replace refs, grafts, rewritten objects or refs) changes it. After :meth:`seal`, a file not
    loaded is a programming error, never a late read."""

    git: Git
    rev: str
    files: dict[str, str | None] = field(default_factory=dict)
    sealed: bool = False

    def load(self, paths: Iterable[str]) -> None:
        wanted = [p for p in dict.fromkeys(paths) if p not in self.files]
        if not wanted:
            return
        if self.sealed:
            raise InfrastructureError(f"{wanted[0]} at {self.rev[:12]} was not read before the agent ran")
        texts = self.git.blobs([f"{self.rev}:{p}" for p in wanted])
        self.files.update({p: texts[f"{self.rev}:{p}"] for p in wanted})

    def read(self, path: str) -> str | None:
        self.load([path])
        return self.files[path]

    def seal(self) -> None:
        self.sealed = True


@dataclass(frozen=True)
class Workspace:
    """Paths named from the repository root, whatever directory the run started in.

    Selection, baselines, ``git show`` and annotations all speak repository-relative paths; a
    monorepo whose evaluation runs from ``agents/`` names its datasets ``agents/...`` there.
    Outside a repository the working directory stands in for the root.
    """

    root: Path
    cwd: Path

    @property
    def prefix(self) -> str:
        """The working directory relative to the root: "" or "agents/"."""
        inner = self.cwd.relative_to(self.root).as_posix() if self.cwd.is_relative_to(self.root) else ""
        return "" if inner in ("", ".") else inner + "/"

    def rel(self, path: str | Path) -> str:
        """A path (relative to the working directory, or absolute) named from the root; kept as
        given when it lies outside the root."""
        full = Path(os.path.normpath(self.cwd / path))
        return full.relative_to(self.root).as_posix() if full.is_relative_to(self.root) else Path(path).as_posix()

    def glob(self, pattern: str) -> str:
        """A glob written relative to the working directory, as a glob over root-relative paths
        (an exclusion stays one: ``!drafts/**`` -> ``!agents/drafts/**``)."""
        include, glob = split(pattern)
        # Normalized: a config above the working directory names its paths ``../evaluation/...``.
        rooted = glob if glob.startswith("/") else posixpath.normpath(self.prefix + glob.removeprefix("./"))
        return rooted if include else NEGATION + rooted

    def file(self, rel: str) -> Path:
        return self.root / rel
