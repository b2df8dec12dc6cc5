"""Evaluation: datasets with ground truth, metrics, block-label alignment and the benchmark runner."""
