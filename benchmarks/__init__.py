"""Reproductions of the paper's evaluation (section 4): run each as `python -m benchmarks.<name>`."""
