"""The Kubernetes executor (experimental: never run against a live cluster; docs/kubernetes.md):
the plan (``plan``), a batch/v1 Job per task (``executor``), multi-node gangs (``gang``).
Extra: ``valorch[k8s]``."""
