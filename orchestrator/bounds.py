"""Bounds every layer shares, in a module that imports nothing (the CLI's flag checks read
them at start-up without loading the pydantic models of ``spec.py``)."""

#: the longest deadline or timeout a flag or a job spec may give: a week (a run always has a deadline)
MAX_SECONDS = 7 * 24 * 3600.0

#: matrix versions and baseline names: they appear in file names, URLs and report headers
VERSION_PATTERN = r"^[A-Za-z0-9._-]{1,64}$"
#: a Kubernetes extended resource a device plugin advertises (``rdma/hca``): a DNS-subdomain
#: prefix, a slash and a name (the API's own rule for resource names; at most 253 characters)
EXTENDED_RESOURCE = r"^(?=.{3,253}$)[a-z0-9]([a-z0-9.\-]{0,251}[a-z0-9])?/[A-Za-z0-9]([A-Za-z0-9_.\-]{0,61}[A-Za-z0-9])?$"

#: the integers every store column and JSON field holds: SQLite's (and PostgreSQL's BIGINT) 64 bits
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
#: an integer literal longer than this cannot fit 64 bits (19 digits, a sign, a 0x prefix,
#: underscores): refused before Python converts it (past 4300 digits that conversion raises)
MAX_INT_LITERAL = 32

#: group ids the kernel hands out (gid_t is 32 bits; 4294967295 is (gid_t) -1, "no group")
MAX_GID = (1 << 32) - 2
#: a process's exit status as the shell reports it (signals as 128 + N); negative: killed by signal N
EXIT_CODE_RANGE = (-64, 255)

#: the earliest time a stored run may carry (no valorch ran before it) and how far in the
#: future a clock may be off; a run dated 9999 would be the newest evidence of every cell
EPOCH_ISO = "2020-01-01T00:00:00"
FUTURE_SKEW_S = 24 * 3600.0

#: a name valorch stores and shows (a job, a label, an alias, a component): 1 to 200 characters
MAX_NAME = 200
#: a paragraph of text a user gives (a job's description)
MAX_TEXT = 2_000
