import sys

from macondo_server.cli import main

sys.exit(main())
