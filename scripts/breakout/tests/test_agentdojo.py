"""The AgentDojo corpus is AgentDojo's: the faster YAML parser changes no output, and a replay
gives the outputs of the user task's ground truth with the attack's text in them."""

from __future__ import annotations

import unittest


class Replay(unittest.TestCase):
    """The replay of AgentDojo's ground truth."""

    def setUp(self) -> None:
        try:
            import agentdojo  # noqa: F401
        except ImportError:
            self.skipTest("agentdojo is not installed (scripts/breakout/run installs it)")

    def test_the_c_parser_gives_the_same_outputs(self) -> None:
        import warnings

        import yaml

        from breakout import agentdojo_corpus

        warnings.filterwarnings("ignore")
        import agentdojo.attacks  # noqa: F401
        from agentdojo.attacks.attack_registry import ATTACKS
        from agentdojo.task_suite.load_suites import get_suites

        pure = yaml.safe_load
        suite = get_suites(agentdojo_corpus.BENCHMARK_VERSION)["slack"]
        attack = ATTACKS["important_instructions"](suite, agentdojo_corpus._victim())
        pairs = [
            (user, injection)
            for user in list(suite.user_tasks.values())[:2]
            for injection in list(suite.injection_tasks.values())[:2]
        ]
        try:
            slow = [agentdojo_corpus._outputs(suite, u, attack.attack(u, i)) for u, i in pairs]
            agentdojo_corpus._fast_yaml()
            self.assertIsNot(yaml.safe_load, pure)
            fast = [agentdojo_corpus._outputs(suite, u, attack.attack(u, i)) for u, i in pairs]
        finally:
            yaml.safe_load = pure
        self.assertEqual(slow, fast)
        self.assertTrue(any("<INFORMATION>" in output for outputs in fast for _, output in outputs))


if __name__ == "__main__":
    unittest.main()
