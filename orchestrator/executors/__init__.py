"""Executors: one module per way of running a probe (host, docker, slurm ...)."""
