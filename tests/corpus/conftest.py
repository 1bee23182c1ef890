# The corpus's files are inputs (workloads among them), not tests of this project.
collect_ignore_glob = ["files/*"]
