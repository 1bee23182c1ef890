"""Turn a `valorch hosts probe --record DIR` directory into test fixtures.

python scripts/record-to-fixtures.py DIR LABEL [tests/fixtures]
"""

import sys
from pathlib import Path

from orchestrator.hosts.record_fixtures import to_fixtures

if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    for path in to_fixtures(
        Path(sys.argv[1]),
        Path(sys.argv[3] if len(sys.argv) == 4 else "tests/fixtures"),
        sys.argv[2],
    ):
        print(path)
