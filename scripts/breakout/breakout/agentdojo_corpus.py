"""The AgentDojo corpus: the tool outputs an agent receives under attack, with no model.

For every suite of AgentDojo's benchmark, every user task, every injection task and every attack
(AgentDojo's own `attack()`, which places the attack's text in the injection vectors the user
task's ground truth reads), the environment is loaded with those injections and the user task's
ground-truth tool calls are run in it with AgentDojo's `FunctionsRuntime`, exactly as its
`GroundTruthPipeline` runs them; each tool's output, formatted as AgentDojo hands it to a model
(`tool_result_to_str`, YAML), is one result. Denial-of-service attacks are run with the first
injection task only, as AgentDojo's benchmark runs them; the manual attack (which asks a human)
is left out. A result is `attacked` when it differs from the same call's output in the
environment without injections.

`planted` gives the adaptive corpus's `agentdojo` family: the same replay with an attacker who
knows the scheme, its forged closer and opener around AgentDojo's text in the injection vectors.

Needs the `agentdojo` package (scripts/breakout/requirements.txt). The results are cached as
JSON lines, keyed by the package's version, the benchmark version, the slice and the source of
the functions that make them.
"""

from __future__ import annotations

import gzip
import hashlib
import inspect
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Iterator

from .schemes import Result

BENCHMARK_VERSION = "v1.2.2"
"""AgentDojo's latest benchmark version in the pinned package."""

VICTIM_MODEL = "gpt-4o-2024-05-13"
"""The model name the attacks address (several name the victim model: "GPT-4")."""

SMALL_ATTACK = "important_instructions"
SMALL_USER_TASKS = 2
"""The small slice: per suite, the first two user tasks, every injection task, this attack."""


def _fast_yaml() -> None:
    """Parses AgentDojo's YAML with libyaml's C parser rather than PyYAML's pure Python one.

    The environments are re-parsed for every combination and the pure parser makes the full
    corpus take four times as long. Both build the same objects with the same safe constructor;
    `tests/test_agentdojo.py` checks that the outputs are identical on a sample.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", None)
    if loader is not None:
        yaml.safe_load = lambda stream: yaml.load(stream, Loader=loader)  # type: ignore[assignment]


def package_version() -> str:
    """The installed agentdojo's version."""
    from importlib.metadata import version

    return version("agentdojo")


def _victim():
    """A stand-in for the attacked pipeline: the attacks only read its name."""
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement

    class Victim(BasePipelineElement):
        """Never queried: no model runs here."""

        name = VICTIM_MODEL

        def query(self, *args, **kwargs):  # noqa: ANN002, ANN003
            """Refuses: the benchmark runs no model."""
            raise RuntimeError("the breakout benchmark runs no model")

    return Victim()


def _outputs(suite, user_task, injections: dict[str, str]) -> list[tuple[str, str]]:
    """The (tool, output) pairs of the user task's ground truth in the injected environment."""
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
    from agentdojo.functions_runtime import FunctionsRuntime
    from agentdojo.types import get_text_content_as_str

    environment = suite.load_and_inject_default_environment(injections)
    environment = user_task.init_environment(environment)
    _, _, _, messages, _ = GroundTruthPipeline(user_task).query(
        user_task.PROMPT, FunctionsRuntime(suite.tools), environment
    )
    return [
        (message["tool_call"].function, get_text_content_as_str(message["content"]))
        for message in messages
        if message["role"] == "tool"
    ]


def generate(slice_name: str) -> Iterator[dict]:
    """Every result of the corpus, as a dict: suite, user and injection task, attack, tool,
    output, attacked."""
    warnings.filterwarnings("ignore")
    _fast_yaml()
    import agentdojo.attacks  # noqa: F401  (registers the attacks)
    from agentdojo.attacks.attack_registry import ATTACKS
    from agentdojo.task_suite.load_suites import get_suites

    victim = _victim()
    for suite_name, suite in get_suites(BENCHMARK_VERSION).items():
        user_tasks = list(suite.user_tasks.items())
        injection_tasks = list(suite.injection_tasks.items())
        attacks = sorted(name for name in ATTACKS if name != "manual")
        if slice_name == "small":
            user_tasks, attacks = user_tasks[:SMALL_USER_TASKS], [SMALL_ATTACK]
        benign = {uid: _outputs(suite, task, {}) for uid, task in user_tasks}
        for attack_name in attacks:
            started = time.monotonic()
            attack = ATTACKS[attack_name](suite, victim)
            tasks = injection_tasks[:1] if attack.is_dos_attack else injection_tasks
            count = 0
            for uid, user_task in user_tasks:
                for iid, injection_task in tasks:
                    try:
                        injections = attack.attack(user_task, injection_task)
                    except ValueError as error:  # an injection task the attack cannot phrase
                        print(f"breakout: agentdojo: skipped {suite_name}/{uid}/{iid}/{attack_name}: {error}", file=sys.stderr)
                        continue
                    clean = benign[uid]
                    for index, (tool, output) in enumerate(_outputs(suite, user_task, injections)):
                        attacked = index >= len(clean) or clean[index] != (tool, output)
                        count += 1
                        yield {
                            "suite": suite_name,
                            "user_task": uid,
                            "injection_task": iid,
                            "attack": attack_name,
                            "tool": tool,
                            "output": output,
                            "attacked": attacked,
                        }
            print(
                f"breakout: agentdojo: {suite_name} {attack_name}: {count} results in {time.monotonic() - started:.1f} s",
                file=sys.stderr,
            )


def generate_planted(slice_name: str, forged_before: str, forged_after: str) -> Iterator[dict]:
    """The adaptive attacker in AgentDojo's environments: for every user task and the first
    injection task of its suite, AgentDojo's `important_instructions` text with the scheme's
    forged closer before it and its forged opener after it, in every injection vector the user
    task's ground truth reads. The outputs go through AgentDojo's own formatting (YAML), as a
    model would receive them."""
    warnings.filterwarnings("ignore")
    _fast_yaml()
    import agentdojo.attacks  # noqa: F401
    from agentdojo.attacks.attack_registry import ATTACKS
    from agentdojo.task_suite.load_suites import get_suites

    victim = _victim()
    for suite_name, suite in get_suites(BENCHMARK_VERSION).items():
        user_tasks = list(suite.user_tasks.items())
        if slice_name == "small":
            user_tasks = user_tasks[:SMALL_USER_TASKS]
        iid, injection_task = next(iter(suite.injection_tasks.items()))
        attack = ATTACKS[SMALL_ATTACK](suite, victim)
        for uid, user_task in user_tasks:
            injections = {
                vector: forged_before + "\n" + text + "\n" + forged_after
                for vector, text in attack.attack(user_task, injection_task).items()
            }
            clean = _outputs(suite, user_task, {})
            try:
                outputs = _outputs(suite, user_task, injections)
            except Exception as error:  # noqa: BLE001 (the environment as AgentDojo stores it)
                # AgentDojo places injections in its environments' YAML text before parsing it:
                # markers whose quotes or line breaks that YAML cannot hold where the vector
                # sits leave no environment to run, and are skipped (counted in the report).
                print(f"breakout: agentdojo: planted markers break {suite_name}/{uid}'s environment ({type(error).__name__}); skipped", file=sys.stderr)
                yield {"suite": suite_name, "user_task": uid, "skipped": True}
                continue
            for index, (tool, output) in enumerate(outputs):
                yield {
                    "suite": suite_name,
                    "user_task": uid,
                    "injection_task": iid,
                    "attack": "planted",
                    "tool": tool,
                    "output": output,
                    "attacked": index >= len(clean) or clean[index] != (tool, output),
                }


def _cached(path: Path, records: Iterator[dict]) -> list[dict]:
    """The records at `path`, written there from `records` first when it does not exist."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        with gzip.open(partial, "wt", encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record) + "\n")
        partial.rename(path)
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def _key(*functions) -> str:
    """A cache key from the source of the functions that make the records, so that a change to
    them (and nothing else) makes the corpus anew."""
    source = "".join(inspect.getsource(function) for function in (*functions, _outputs, _victim, _fast_yaml))
    return hashlib.sha256(source.encode()).hexdigest()[:12]


def planted(scheme: str, forged_before: str, forged_after: str, slice_name: str, cache_dir: Path) -> list[Result]:
    """`generate_planted`'s results for one scheme's markers, cached; family `agentdojo`."""
    markers = hashlib.sha256((forged_before + "\0" + forged_after).encode()).hexdigest()[:8]
    path = cache_dir / f"planted-{scheme}-{markers}-{package_version()}-{BENCHMARK_VERSION}-{slice_name}-{_key(generate_planted)}.jsonl.gz"
    records = _cached(path, generate_planted(slice_name, forged_before, forged_after))
    skipped = sum(1 for r in records if r.get("skipped"))
    if skipped:
        print(f"breakout: agentdojo: {scheme}'s markers could not be planted for {skipped} user tasks (AgentDojo's YAML)", file=sys.stderr)
    return [
        Result(r["tool"], (r["output"],), "whole", True, "agentdojo")
        for r in records
        if not r.get("skipped") and r["attacked"]
    ]


def load(slice_name: str, cache_dir: Path) -> list[Result]:
    """The corpus's results, from the cache when it holds them for this package and slice."""
    path = cache_dir / f"agentdojo-{package_version()}-{BENCHMARK_VERSION}-{slice_name}-{_key(generate)}.jsonl.gz"
    return [
        Result(r["tool"], (r["output"],), "whole", r["attacked"], f"{r['suite']}/{r['attack']}")
        for r in _cached(path, generate(slice_name))
    ]
