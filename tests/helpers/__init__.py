"""Helpers shared by the test modules (tests never import each other; they import these)."""
