"""The breakout benchmark: how often an attacker who knows an in-band marking scheme gets text
out of its block, measured without a model.

Modules, each importing only those listed before it:

- `schemes`: each scheme, reimplemented from its public source (the fence is the real `fence`
  binary, run by `fence_runners`);
- `adaptive`: the adaptive corpus, one per scheme, built from the scheme's own markers;
- `measure`: the structural measures (breakout by the scheme's own rule and by our spec's rule,
  recovery, labelling, overhead);
- `mcp_corpus_server`: the hostile stdio MCP server `fence mcp` is put in front of (it imports
  nothing of the package: it runs as a script);
- `fence_runners`: `fence wrap` and `fence mcp` driven as processes;
- `agentdojo_corpus`: AgentDojo's suites replayed along their ground truth in injected
  environments, giving the tool outputs an agent would receive under attack;
- `report`: the table and the per-scheme lines;
- `agentdojo_model`: for those who have a model, AgentDojo's benchmark with the fence as a
  pipeline element (`scripts/breakout/run model`);
- `__main__`: the command line that `scripts/breakout/run` calls.

See docs/breakout.md for what the figures mean and what they do not show.
"""
