"""Scenario tests (a package: test_run.py shares its basename with tests/experiment/test_run.py)."""
