"""Small model zoo used by examples and benchmarks (plain ember; also runs on torch)."""
