"""The benchmark's own tests: `python3 -m unittest discover -s tests -t .` from scripts/breakout."""
