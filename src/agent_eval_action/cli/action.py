"""The container's entrypoint: ``python -m agent_eval_action action``.

Reads the ``INPUT_*`` variables (hyphens kept, as the runner sets them; ``cli.settings``
declares them) and ``GITHUB_*`` into the same config object the CLI uses, then: on a pull
request, the check; on a push with ``update-baseline``, writes the baselines and commits them;
otherwise evaluates all. Also the ``workflow_run`` half of the fork-safe pair
(:func:`fork_comment`: the ``fork-comment`` input and command).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agent_eval_action.cli.settings import flags_from_inputs, read_bool, read_float, read_inputs
from agent_eval_action.system.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from agent_eval_action.config import Config
    from agent_eval_action.publish.publisher import GitHubContext

PR_EVENTS = {"pull_request", "pull_request_target"}
BOT = ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")


def main(env: Mapping[str, str] | None = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    from agent_eval_action.service.api import credentials_held_out, trust_checkouts
    from agent_eval_action.text.workflow import in_actions, mask

    env = dict(os.environ if env is None else env)
    actions = in_actions(env)
    inputs = read_inputs(env)
    token = inputs["github-token"] or env.get("GITHUB_TOKEN") or ""
    mask(token, out, actions=actions)
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
    if inputs["fork-comment"]:
        # Nothing of the fork runs here: only its artifact's text is posted.
        return fork_comment(str(workspace / inputs["fork-comment"]), comment_key=inputs["comment-key"] or "default", out=out, env=env)
    # The workspace is mounted from the host, owned by another user: git refuses it otherwise.
    trust_checkouts(workspace)
    with credentials_held_out(workspace, out):
        return _act(env, inputs, token, workspace, out, err)


def _act(env: dict[str, str], inputs: dict[str, str], token: str, workspace: Path, out: TextIO, err: TextIO) -> int:
    """The action's work in ``workspace``: the check, the baselines or the evaluation the event asks for."""
    from agent_eval_action.cli.commands import agent_python, check_and_publish
    from agent_eval_action.config import load_config
    from agent_eval_action.publish.publisher import GitHubContext
    from agent_eval_action.service.api import base_ref
    from agent_eval_action.text.workflow import group, in_actions, redactor_for

    actions = in_actions(env)
    directory = workspace / inputs["working-directory"] if inputs["working-directory"] else workspace
    if not directory.is_dir():
        raise ConfigError("input working-directory", f"{directory} is not a directory")
    os.chdir(directory)
    config = load_config(inputs["config"] or None).with_overrides(**flags_from_inputs(inputs))
    # As the command line chooses it, said in the same line (the install input's venv is made
    # outside the workspace, under RUNNER_TEMP).
    config = agent_python(config, inputs["install"] or None, env, out)
    if inputs["max-regression"]:
        raw = inputs["max-regression"]
        value: float | str = raw if raw.endswith("%") else read_float("max-regression", raw)
        # Explicit in the workflow: laid over the gate's rules, which otherwise come from the base.
        config = config.with_origin(gate_override=(*config.origin.gate_override, ("max_regression", value)))
        config = config.with_gate(config.gate)
    redactor_for([config.agent_auth_env], out, err)  # the set-up the command line's commands share (commands.invoke)
    context = GitHubContext.from_env(env, token=token or None)
    event = env.get("GITHUB_EVENT_NAME", "")
    if event == "push" and read_bool("update-baseline", inputs["update-baseline"], False):
        return update_baselines(config, env, context, out, err)
    if inputs["merge"]:
        from agent_eval_action.cli.commands import merge_and_finish

        with group(out, "Merge shards", actions=actions):
            code = merge_and_finish(inputs["merge"].split(), config, context, out=out, err=err)
        return _lenient(code, inputs, out, actions)
    base = base_ref(inputs["base-ref"] or None, config, env if event in PR_EVENTS else {})
    with group(out, "Evaluate", actions=actions):
        code = check_and_publish(
            config,
            base=base,
            evaluate_all=event not in PR_EVENTS and not base,
            context=context,
            out=out,
            err=err,
            install=inputs["install"] or None,
        )
    return _lenient(code, inputs, out, actions)


def _lenient(code: int, inputs: dict[str, str], out: TextIO, actions: bool) -> int:
    from agent_eval_action.text.workflow import annotation, command

    if code == ExitCode.GATE_FAILED and not read_bool("fail-on-regression", inputs["fail-on-regression"], True):
        command(out, annotation("warning", "the gate failed; fail-on-regression is false, so the check passes"), actions=actions)
        return int(ExitCode.PASSED)
    return code


def update_baselines(config: Config, env: Mapping[str, str], context: GitHubContext, out: TextIO, err: TextIO) -> int:
    """On a push to the default branch: write the baselines, commit and push them if they changed."""
    from agent_eval_action.cli.commands import write_baselines
    from agent_eval_action.service.api import commit_baselines
    from agent_eval_action.text.workflow import group

    branch = env.get("GITHUB_REF_NAME") or env.get("GITHUB_REF", "").removeprefix("refs/heads/")
    default = context.default_branch
    if default and branch != default:
        print(f"baselines are only written on the default branch ({default}); this push is to {branch}", file=out)
        return int(ExitCode.PASSED)
    with group(out, "Update baselines", actions=context.in_actions):
        code = write_baselines(config, None, out=out, err=err)
    # 3: an outage kept some questions from being recorded; the others' records (and the kept
    # previous ones) are still committed, and the step fails so the outage is seen.
    if code not in (ExitCode.PASSED, ExitCode.INFRASTRUCTURE):
        return code
    if not commit_baselines(config, "Update agent-eval baselines [skip ci]", BOT, branch, context.token):
        print("baselines unchanged: nothing to commit", file=out)
        return code
    print(f"committed and pushed the updated baselines to {branch}", file=out)
    return code


# comment.md is read up to this size: a fork's artifact is cut to GitHub's limit anyway.
ARTIFACT_MAX_BYTES = 4_000_000


def fork_comment(path: str, *, comment_key: str = "default", out: TextIO = sys.stdout, env: Mapping[str, str] | None = None) -> int:
    """The ``workflow_run`` half of the fork-safe pair: posts the fork run's comment.md on the PR
    whose head is the run's head commit (see ``publish.post_fork_comment``)."""
    from agent_eval_action.publish.github import GitHubClient, GitHubError
    from agent_eval_action.publish.publisher import GitHubContext, post_fork_comment, read_event
    from agent_eval_action.system.errors import InfrastructureError
    from agent_eval_action.text.workflow import mask

    env = dict(os.environ if env is None else env)
    context = GitHubContext.from_env(env)
    if not context.repository or not context.token:
        raise ConfigError("GITHUB_REPOSITORY / GITHUB_TOKEN", "both are needed to post: run this in the workflow_run job")
    mask(context.token, out, actions=context.in_actions)
    try:
        with open(path, "rb") as handle:
            text = handle.read(ARTIFACT_MAX_BYTES).decode("utf-8", errors="replace")
    except OSError as error:
        raise ConfigError(path, f"cannot read the fork's comment ({error.strerror}): download the artifact first") from None
    client = GitHubClient(context.api_url, context.token)
    try:
        posted = post_fork_comment(text, read_event(env), context.repository, comment_key, client)
    except GitHubError as error:
        raise InfrastructureError(f"could not post the fork PR's comment: {error}") from None
    if posted is None:
        print("no open PR has the run's head commit any more (closed, or pushed again): nothing posted", file=out)
    else:
        print(f"comment: {posted.url}", file=out)
    return int(ExitCode.PASSED)
